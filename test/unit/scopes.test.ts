import assert from 'node:assert/strict';
import {
  ALIASES,
  checkScopes,
  DESTROY_SCOPES,
  expandScopes,
  holds,
  isKnownScope,
  isNamedOnly,
  READ_SCOPES,
  WRITE_SCOPES,
} from '../../lib/scopes';

// spec 5.2: implication rules and alias expansion, checked as pure functions.

const set = (...s: string[]) => new Set(s);

describe('lib/scopes', () => {
  describe('expandScopes', () => {
    it('expands read to every read scope and write to read + write scopes', () => {
      assert.deepEqual(expandScopes(['read']), [...READ_SCOPES]);
      assert.deepEqual(expandScopes(['write']), [...READ_SCOPES, ...WRITE_SCOPES]);
    });

    it('de-duplicates and orders by the vocabulary', () => {
      assert.deepEqual(expandScopes(['posts:write', 'read', 'posts:read', 'write', 'read']), [...READ_SCOPES, ...WRITE_SCOPES]);
      assert.deepEqual(expandScopes(['posts:read', 'workspace:read', 'posts:read']), ['workspace:read', 'posts:read']);
      assert.deepEqual(expandScopes([]), []);
    });

    it('never adds posts:publish, settings:write or a destroy scope through an alias', () => {
      const all = expandScopes(['read', 'write']);
      for (const s of ['posts:publish', 'settings:write', ...DESTROY_SCOPES, 'webhooks:manage', 'offline_access'])
        assert.ok(!all.includes(s), s);
      assert.ok(!all.includes('read') && !all.includes('write'), 'aliases themselves are not kept');
    });

    it('keeps named-only scopes requested by name', () => {
      assert.deepEqual(expandScopes(['posts:destroy', 'read', 'posts:publish']), [...READ_SCOPES, 'posts:publish', 'posts:destroy']);
    });

    it('keeps unknown tokens, after the known ones and sorted, for the caller to reject', () => {
      assert.deepEqual(expandScopes(['zeta:read', 'posts:read', 'alpha:write']), ['posts:read', 'alpha:write', 'zeta:read']);
      assert.equal(isKnownScope('zeta:read'), false);
      assert.equal(isKnownScope('read'), true);
      assert.equal(isKnownScope('posts:destroy'), true);
    });

    it('has aliases that are themselves duplicate-free', () => {
      assert.equal(new Set(ALIASES.write).size, ALIASES.write.length);
      assert.equal(new Set(ALIASES.read).size, ALIASES.read.length);
    });
  });

  describe('holds', () => {
    it('lets a write scope satisfy the read of the same resource', () => {
      for (const r of ['posts', 'notes', 'sources', 'knowledge']) assert.equal(holds(set(`${r}:write`), `${r}:read`), true, r);
    });

    it('lets posts:generate satisfy posts:read, and nothing more', () => {
      assert.equal(holds(set('posts:generate'), 'posts:read'), true);
      assert.equal(holds(set('posts:generate'), 'posts:write'), false);
      assert.equal(holds(set('posts:generate'), 'notes:read'), false);
    });

    it('never lets a read scope satisfy a write', () => {
      for (const r of ['posts', 'notes', 'sources', 'knowledge']) assert.equal(holds(set(`${r}:read`), `${r}:write`), false, r);
      assert.equal(holds(set(...READ_SCOPES), 'posts:generate'), false);
      assert.equal(holds(set(...READ_SCOPES), 'jobs:cancel'), false);
    });

    it('does not imply across resources', () => {
      assert.equal(holds(set('notes:write'), 'posts:read'), false);
      assert.equal(holds(set('posts:write'), 'workspace:read'), false);
    });

    it('never implies posts:publish, settings:write or *:destroy', () => {
      const everything = set(...READ_SCOPES, ...WRITE_SCOPES);
      assert.equal(holds(everything, 'posts:publish'), false);
      assert.equal(holds(everything, 'settings:write'), false);
      for (const d of [...DESTROY_SCOPES, 'anything:destroy']) {
        assert.equal(holds(everything, d), false, d);
        assert.equal(isNamedOnly(d), true, d);
      }
      assert.equal(holds(set('posts:publish'), 'posts:destroy'), false);
      assert.equal(holds(set('posts:destroy'), 'posts:publish'), false);
      // Named, they hold.
      assert.equal(holds(set('posts:publish'), 'posts:publish'), true);
      assert.equal(holds(set('settings:write'), 'settings:write'), true);
      assert.equal(holds(set('notes:destroy'), 'notes:destroy'), true);
    });

    it('does not treat a literal alias in a grant as its expansion', () => {
      // Grants are stored expanded; a bare alias token must not unlock anything by itself.
      assert.equal(holds(set('write'), 'posts:write'), false);
      assert.equal(holds(set('read'), 'posts:read'), false);
    });
  });

  describe('checkScopes', () => {
    it('accepts any grant for the any rule', () => {
      assert.deepEqual(checkScopes(set(), 'any'), { ok: true });
    });

    it('names the scope when exactly one of allOf is missing', () => {
      assert.deepEqual(checkScopes(set('notes:read'), { allOf: ['posts:write'] }), { ok: false, requiredScope: 'posts:write' });
      assert.deepEqual(checkScopes(set('notes:read'), { allOf: ['notes:read', 'posts:write'] }), {
        ok: false,
        requiredScope: 'posts:write',
      });
      assert.deepEqual(checkScopes(set('posts:write'), { allOf: ['posts:write', 'media:read'] }), {
        ok: false,
        requiredScope: 'media:read',
      });
    });

    it('names nothing when several are missing', () => {
      const r = checkScopes(set(), { allOf: ['posts:write', 'media:read'] });
      assert.equal(r.ok, false);
      assert.equal('requiredScope' in r ? r.requiredScope : undefined, undefined);
    });

    it('applies implication inside allOf', () => {
      assert.deepEqual(checkScopes(set('posts:write', 'media:read'), { allOf: ['posts:read', 'media:read'] }), { ok: true });
      assert.deepEqual(checkScopes(set('posts:generate'), { allOf: ['posts:read'] }), { ok: true });
    });

    it('accepts any one alternative of anyOf and names none when all are missing', () => {
      assert.deepEqual(checkScopes(set('knowledge:write'), { anyOf: ['sources:write', 'knowledge:write'] }), { ok: true });
      assert.deepEqual(checkScopes(set('sources:write'), { anyOf: ['sources:write', 'knowledge:write'] }), { ok: true });
      const refused = checkScopes(set('sources:read', 'knowledge:read'), { anyOf: ['sources:write', 'knowledge:write'] });
      assert.deepEqual(refused, { ok: false });
      // Implication counts for alternatives too.
      assert.deepEqual(checkScopes(set('posts:generate'), { anyOf: ['notes:read', 'posts:read'] }), { ok: true });
    });

    it('refuses a named-only requirement that only aliases cover', () => {
      const everything = set(...expandScopes(['read', 'write']));
      assert.deepEqual(checkScopes(everything, { allOf: ['posts:publish'] }), { ok: false, requiredScope: 'posts:publish' });
      assert.deepEqual(checkScopes(everything, { allOf: ['settings:write'] }), { ok: false, requiredScope: 'settings:write' });
      assert.deepEqual(checkScopes(everything, { allOf: ['posts:destroy'] }), { ok: false, requiredScope: 'posts:destroy' });
      assert.deepEqual(checkScopes(everything, { anyOf: ['posts:destroy', 'notes:destroy'] }), { ok: false });
    });
  });
});
