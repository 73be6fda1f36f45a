// The operator CLI as operators run it: a separate process per command, against the test
// database the runner prepared (DATABASE_URL and REDIS_URL are inherited). Keys it prints are
// then used against the real API in this process, so "issue, narrow, revoke" is checked end to
// end, including the cross-process cache invalidation the API relies on (spec 5.1).

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBase62 } from '../../lib/ids';
import { client, useApi } from '../support/app';
import { admin, assertHelpLists, fails, ok, root, run, unique } from '../support/admin';

describe('operator CLI (bin/admin)', function () {
  // Each command is a fresh Node process; on a loaded machine that is seconds, not milliseconds.
  this.timeout(300_000);

  const api = useApi();

  describe('usage', () => {
    it('prints help for the whole CLI and for one noun, and usage errors exit 2', async () => {
      await assertHelpLists([
        'workspace create',
        'workspace set-plan',
        'workspace list',
        'workspace show',
        'user create',
        'user list',
        'member add',
        'project create',
        'project link',
        'project list',
        'key create',
        'key scopes',
        'key revoke',
        'key list',
        'webhook create',
        'webhook list',
        'webhook show',
        'webhook redeliver',
        'webhook enable',
        'webhook disable',
        'post-status list',
        'post-status create',
        'post-status rename',
        'post-status set-default',
        'workspace set-storage-limit',
        'usage show',
        'knowledge add',
        'idea link',
      ]);
      const key = await admin(['key', 'help']);
      assert.equal(key.code, 0);
      assert.match(key.stdout, /bin\/admin key create --workspace org_x --scopes SCOPES/);
      const verb = await admin(['project', 'create', '--help']);
      assert.equal(verb.code, 0);
      assert.match(verb.stdout, /--connection connected\|expiring_soon\|degraded\|disconnected\|revoked\|none/);

      const bare = await admin([]);
      assert.equal(bare.code, 2);
      assert.match(bare.stderr, /^Usage: bin\/admin/);
      await fails(['frobnicate', 'now'], 2, /unknown command "frobnicate"/);
      await fails(['key', 'frobnicate'], 2, /unknown command "key frobnicate"/);
    });

    it('rejects missing, unknown and malformed flags with exit 2 before touching the database', async () => {
      // An unreachable database proves these fail on the command line alone.
      const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' };
      await fails(['workspace', 'create', '--name', 'Acme'], 2, /missing --plan PLAN/, { env });
      await fails(['key', 'create', '--workspace', 'org_x'], 2, /missing --scopes/, { env });
      await fails(['member', 'add', '--workspace', 'org_x', '--role', 'Admin'], 2, /missing --user/, { env });
      await fails(['workspace', 'list', '--bogus', '1'], 2, /Unknown option '--bogus'/, { env });
      await fails(
        ['project', 'create', '--workspace', 'org_x', '--type', 'PAGE', '--name', 'x'],
        2,
        /--type must be one of PERSONAL_BRAND, COMPANY_PAGE, AMPLIFIER/,
        { env },
      );
      await fails(['key', 'create', '--workspace', 'org_x', '--scopes', 'read', '--expires-at', 'soon'], 2, /not an ISO 8601 date-time/, {
        env,
      });
      await fails(
        ['workspace', 'create', '--name', 'A', '--plan', 'BUSINESS', '--feature', 'api=maybe'],
        2,
        /--feature api must be true or false/,
        { env },
      );
    });

    it('reports an unreachable Postgres in one line and exits 1', async () => {
      await fails(['workspace', 'list'], 1, /^DATABASE_URL: cannot reach Postgres at 127\.0\.0\.1:1/, {
        env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' },
      });
    });
  });

  describe('provisioning', () => {
    it('creates, re-plans, lists and shows workspaces', async () => {
      const agency = await ok(['workspace', 'create', '--name', 'Agency', '--plan', 'ENTERPRISE']);
      const w = await ok([
        'workspace',
        'create',
        '--name',
        'Acme',
        '--plan',
        'business',
        '--feature',
        'webhooks=false',
        '--feature',
        'beta=true',
        '--require-review',
        '--billing-workspace',
        agency.id,
        '--ai-enforcement',
        'warn',
      ]);
      assert.match(w.id, /^org_/);
      assert.equal(w.plan, 'BUSINESS');
      assert.equal(w.effectivePlan, 'ENTERPRISE');
      assert.equal(w.features.webhooks, false);
      assert.equal(w.features.beta, true);
      assert.equal(w.requireReviewWorkflow, true);
      assert.equal(w.billingWorkspaceId, agency.id);
      assert.equal(w.aiEnforcement, 'warn');

      const replanned = await ok(['workspace', 'set-plan', '--workspace', w.id, '--plan', 'ADVANCED']);
      assert.equal(replanned.plan, 'ADVANCED');

      const list = await ok(['workspace', 'list']);
      const listed = list.find((x: any) => x.id === w.id);
      assert.equal(listed.plan, 'ADVANCED');
      assert.equal(listed.projectCount, 0);

      const shown = await ok(['workspace', 'show', '--workspace', w.id]);
      assert.equal(shown.name, 'Acme');
      assert.deepEqual([shown.members, shown.projects, shown.apiKeys], [[], [], []]);

      await fails(['workspace', 'create', '--name', 'X', '--plan', 'PLATINUM'], 1, /unknown plan "PLATINUM"/);
      await fails(['workspace', 'show', '--workspace', 'org_missing'], 1, /no workspace org_missing/);
    });

    it('creates users without ever printing the password', async () => {
      const email = `Ann.${unique()}@Example.com`;
      const password = `pw-${randomBase62(16)}`;
      const created = await admin(['user', 'create', '--email', email, '--name', 'Ann Lee', '--password', password]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.json.email, email.toLowerCase());
      assert.equal(created.json.hasPassword, true);
      assert.ok(!created.stdout.includes(password) && !created.stderr.includes(password));

      const fromStdin = `stdin-${randomBase62(16)}`;
      const piped = await admin(['user', 'create', '--email', `bob.${unique()}@example.com`, '--password-stdin'], {
        input: `${fromStdin}\n`,
      });
      assert.equal(piped.code, 0, piped.stderr);
      assert.ok(!piped.stdout.includes(fromStdin));

      const list = await admin(['user', 'list']);
      assert.equal(list.code, 0);
      const ann = list.json.find((u: any) => u.id === created.json.id);
      assert.equal(ann.name, 'Ann Lee');
      assert.ok(!list.stdout.includes(password) && !/password_hash|scrypt|argon|\$2[aby]\$/i.test(list.stdout));

      const reset = await admin(['user', 'set-password', '--user', email, '--password-stdin'], { input: `${password}-2\n` });
      assert.equal(reset.code, 0, reset.stderr);
      assert.deepEqual([reset.json.id, reset.json.hasPassword], [created.json.id, true]);
      assert.ok(!reset.stdout.includes(password));

      await fails(['user', 'create', '--email', email], 1, /already exists/);
      await fails(['user', 'create', '--email', 'not-an-email'], 2, /not an email address/);
    });

    it('creates projects with connection presets, links a company page, adds members', async () => {
      const w = await ok(['workspace', 'create', '--name', 'Projects', '--plan', 'BUSINESS']);
      const project = (type: string, name: string, ...flags: string[]) =>
        ok(['project', 'create', '--workspace', w.id, '--type', type, '--name', name, ...flags]);
      const person = await project('PERSONAL_BRAND', 'Ann Lee', '--username', 'ann-lee', '--timezone', 'Europe/Paris', '--language', 'fr');
      assert.match(person.id, /^proj_/);
      assert.equal(person.typeLabel, 'Network Account');
      assert.equal(person.username, 'ann-lee');
      assert.equal(person.timezone, 'Europe/Paris');
      assert.equal(person.language, 'fr');
      assert.equal(person.network.state, 'connected');

      const amp = await project('AMPLIFIER', 'Sam', '--connection', 'expiring_soon');
      assert.equal(amp.network.state, 'expiring_soon');
      const revoked = await project('PERSONAL_BRAND', 'Rev', '--connection', 'revoked');
      assert.deepEqual([revoked.network.state, revoked.network.canPublish], ['revoked', false]);

      const linked = await project('COMPANY_PAGE', 'Acme Inc', '--linked-project', person.id);
      assert.equal(linked.connectionId, person.connectionId);
      const page = await project('COMPANY_PAGE', 'Other Inc', '--connection', 'none');
      assert.equal(page.network, null);
      const relinked = await ok(['project', 'link', '--workspace', w.id, '--project', page.id, '--admin-project', amp.id]);
      assert.equal(relinked.network.state, 'expiring_soon');

      const list = await ok(['project', 'list', '--workspace', w.id]);
      assert.deepEqual(
        list.map((p: any) => p.id),
        [person.id, amp.id, revoked.id, linked.id, page.id],
      );

      await fails(
        ['project', 'create', '--workspace', w.id, '--type', 'PERSONAL_BRAND', '--name', 'X', '--timezone', 'Mars/Olympus'],
        1,
        /unknown timezone/,
      );
      await fails(
        ['project', 'create', '--workspace', 'org_missing', '--type', 'PERSONAL_BRAND', '--name', 'X'],
        1,
        /no workspace org_missing/,
      );
      await fails(
        ['project', 'create', '--workspace', w.id, '--type', 'AMPLIFIER', '--name', 'X', '--linked-project', person.id],
        2,
        /COMPANY_PAGE only/,
      );
      await fails(['project', 'link', '--workspace', w.id, '--project', person.id, '--admin-project', amp.id], 1, /no company page/);

      const email = `member.${unique()}@example.com`;
      const user = await ok(['user', 'create', '--email', email]);
      const m = await ok([
        'member',
        'add',
        '--workspace',
        w.id,
        '--user',
        email,
        '--role',
        'Member',
        '--project',
        person.id,
        '--project',
        amp.id,
      ]);
      assert.deepEqual([m.userId, m.role, m.roleLabel], [user.id, 'personal_brand', 'Member']);
      assert.deepEqual([...m.projectIds].sort(), [person.id, amp.id].sort());
      const legacy = await ok(['member', 'add', '--workspace', w.id, '--user', user.id, '--role', 'team_manager']);
      assert.deepEqual([legacy.role, legacy.roleLabel], ['team_manager', 'Admin']);
      const shown = await ok(['workspace', 'show', '--workspace', w.id]);
      assert.equal(shown.members.length, 1);
      assert.equal(shown.projects.length, 5);

      await fails(['member', 'add', '--workspace', w.id, '--user', email, '--role', 'Owner'], 1, /unknown role "Owner"/);
      await fails(
        ['member', 'add', '--workspace', w.id, '--user', 'nobody@example.com', '--role', 'Admin'],
        1,
        /no user nobody@example.com/,
      );
      await fails(
        ['member', 'add', '--workspace', w.id, '--user', email, '--role', 'Admin', '--project', 'proj_missing'],
        1,
        /projects not in workspace: proj_missing/,
      );
    });
  });

  describe('API keys', () => {
    it('issues a key that works, lists it without the secret, narrows and revokes it', async () => {
      const w = await ok(['workspace', 'create', '--name', 'Keys', '--plan', 'BUSINESS']);
      const issued = await ok(['key', 'create', '--workspace', w.id, '--scopes', 'read,write', '--name', 'ci']);
      assert.match(issued.key, /^svc_sk_live_/);
      assert.match(issued.id, /^key_/);
      assert.equal(issued.name, 'ci');
      assert.ok(issued.scopes.includes('workspace:read') && issued.scopes.includes('posts:write'));
      assert.ok(!issued.scopes.includes('posts:publish'), 'aliases never imply posts:publish');

      const call = client(api.url, issued.key);
      const me = await call('GET', '/v1/workspaces/me');
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.workspace.id, w.id);
      assert.deepEqual([me.body.data.principal.type, me.body.data.principal.id], ['api_key', issued.id]);
      // Warm the API's credential cache so the edits below must invalidate it.
      assert.equal((await call('GET', '/v1/workspaces/context')).status, 200);

      const list = await admin(['key', 'list', '--workspace', w.id]);
      assert.equal(list.code, 0);
      assert.equal(list.json.length, 1);
      assert.equal(list.json[0].last4, issued.key.slice(-4));
      assert.ok(!list.stdout.includes(issued.key), 'key list never shows the plaintext');
      assert.ok(!/key_hash/.test(list.stdout));

      const narrowed = await ok(['key', 'scopes', '--key', issued.id, '--scopes', 'posts:read,posts:write']);
      assert.deepEqual(narrowed.scopes, ['posts:read', 'posts:write']);
      const context = await call('GET', '/v1/workspaces/context');
      assert.equal(context.status, 403, JSON.stringify(context.body));
      assert.equal(context.body.error.code, 'scope_missing');
      assert.equal((await call('GET', '/v1/workspaces/me')).status, 200);

      const revoked = await ok(['key', 'revoke', '--key', issued.id]);
      assert.deepEqual([revoked.status, revoked.alreadyRevoked], ['revoked', false]);
      const started = Date.now();
      let res = await call('GET', '/v1/workspaces/me');
      while (res.status === 200 && Date.now() - started < 5_000) {
        await new Promise((r) => setTimeout(r, 200));
        res = await call('GET', '/v1/workspaces/me');
      }
      assert.equal(res.status, 401, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'key_revoked');
      const again = await ok(['key', 'revoke', '--key', issued.id]);
      assert.equal(again.alreadyRevoked, true);
      assert.equal(again.revokedAt, revoked.revokedAt);
    });

    it('issues test-mode keys with named-only scopes and an expiry', async () => {
      const w = await ok(['workspace', 'create', '--name', 'Keys2', '--plan', 'ADVANCED']);
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const k = await ok([
        'key',
        'create',
        '--workspace',
        w.id,
        '--scopes',
        'posts:read',
        '--scopes',
        'posts:publish posts:destroy',
        '--mode',
        'test',
        '--expires-at',
        expiresAt,
      ]);
      assert.match(k.key, /^svc_sk_test_/);
      assert.deepEqual(k.scopes, ['posts:read', 'posts:publish', 'posts:destroy']);
      assert.equal(k.expiresAt, expiresAt);
      const me = await client(api.url, k.key)('GET', '/v1/workspaces/me');
      assert.equal(me.status, 200, JSON.stringify(me.body));
    });

    it('refuses unknown scopes and the OAuth-only webhooks:manage', async () => {
      const w = await ok(['workspace', 'create', '--name', 'Keys3', '--plan', 'BUSINESS']);
      await fails(['key', 'create', '--workspace', w.id, '--scopes', 'read,posts:reed'], 1, /unknown scopes: posts:reed/);
      await fails(['key', 'create', '--workspace', w.id, '--scopes', 'read,webhooks:manage'], 1, /API keys cannot hold: webhooks:manage/);
      await fails(['key', 'create', '--workspace', w.id, '--scopes', ','], 2, /--scopes needs at least one scope/);
      await fails(['key', 'create', '--workspace', 'org_missing', '--scopes', 'read'], 1, /no workspace org_missing/);
      const k = await ok(['key', 'create', '--workspace', w.id, '--scopes', 'read']);
      await fails(['key', 'scopes', '--key', k.id, '--scopes', 'webhooks:manage'], 1, /API keys cannot hold: webhooks:manage/);
      await fails(['key', 'scopes', '--key', 'key_missing', '--scopes', 'read'], 1, /no API key key_missing/);
    });
  });

  it('runs the compiled entry, rebuilt when a source is newer, answering as the tsx entry does', async () => {
    const entry = path.join(root, 'dist', 'admin-cli.mjs');
    const compiled = await admin(['help']);
    const viaTsx = await admin(['help'], { env: { ADMIN_CLI_BUNDLE: '0' } });
    assert.equal(compiled.code, 0, compiled.stderr);
    assert.equal(compiled.stdout, viaTsx.stdout);
    const built = (await fs.stat(entry)).mtimeMs;
    // A source edited after the build: the next call rebuilds before it runs.
    const source = path.join(root, 'admin', 'cli', 'registry.ts');
    const later = new Date(Math.max(Date.now(), built) + 2_000);
    await fs.utimes(source, later, later);
    const again = await admin(['key', 'help']);
    assert.equal(again.code, 0, again.stderr);
    assert.ok((await fs.stat(entry)).mtimeMs > built, 'the entry was rebuilt');
    const usage = await admin(['key', 'create', '--workspace', 'org_x'], { env: { ADMIN_CLI_BUNDLE: '0' } });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /missing --scopes/);
  });

  it('runs through the bin/admin wrapper from any directory', async () => {
    const r = await run(path.join(root, 'bin', 'admin'), ['workspace', 'create', '--name', 'Wrapper', '--plan', 'STARTER'], {
      cwd: os.tmpdir(),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.plan, 'STARTER');
    const help = await run(path.join(root, 'bin', 'admin'), ['workspace', 'help'], { cwd: os.tmpdir() });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /bin\/admin workspace create/);
  });
});
