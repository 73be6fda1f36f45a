import type { Knex } from 'knex';
import { keyedHash } from '../../lib/crypto';
import { API_KEY_PREFIXES } from '../../lib/auth/apiKeys';
import { ACCESS_TOKEN_PREFIX, createFamily, insertAccessToken, randomToken } from '../../lib/oauth/tokens';
import { ALL_SCOPES, OAUTH_ONLY_SCOPES } from '../../lib/scopes';
import { STATUS_CATEGORIES } from '../../lib/posts/statuses';

// The reads bench's population, written with SQL (generate_series), not through the API: the same
// skew at every size, one workspace with a tenth of the posts and a long tail (bench/README.md,
// "reads"). The caller migrates first; the seeded tables' secondary indexes are dropped for the
// load and rebuilt from their own definitions after it.

/** A measured workspace: an API key with every key scope, an admin's OAuth token with webhooks:manage (spec 5.1). */
export type SeededWorkspace = Record<'workspaceId' | 'projectId' | 'key' | 'adminToken' | 'endpointId', string> & { posts: number };
export type Seeded = { posts: number; largest: SeededWorkspace; small: SeededWorkspace };

const SEEDED_TABLES = `workspaces post_statuses projects posts post_metric_state post_metric_days post_publish_hours notes calendar_slots
  ideas jobs media_assets webhook_endpoints webhook_deliveries knowledge_documents knowledge_chunks`.split(/\s+/);

const pad = (sql: string) => `lpad((${sql})::text, 10, '0')`;
const ws = (n: string) => `'org_r' || ${pad(n)}`;
const proj = (n: string) => `'proj_r' || ${pad(n)}`;

/** The workspace number (1-based) of a uniform draw `u` in SQL, for W workspaces: the tail's at u is 2 + floor((W − 1)·u²). */
const workspaceOf = (u: string, w: number) =>
  `case when ${u} < 0.1 then 1 else 2 + floor(${w - 1} * power((${u} - 0.1) / 0.9, 2))::int end`;

/** A uniform draw in [0, 1) from an integer, stable across runs (Knuth's multiplicative hash; the status uses hashint4). */
const draw = (i: string) => `((${i}::bigint * 2654435761) % 4294967296)::float8 / 4294967296`;

/** Seeds `k`'s database (migrated, empty) with P posts and what goes with them. */
export async function seedReads(k: Knex, { posts: P }: { posts: number }, log: (line: string) => void = () => {}): Promise<Seeded> {
  const W = Math.max(2, Math.round(P / 100));
  const t0 = performance.now();
  // Each statement of a step on its own: a statement with parameters is one prepared statement.
  const step = async (what: string, sql: string, bindings: readonly unknown[] = []) => {
    const t = performance.now();
    let at = 0;
    for (const text of sql.split(/;\n/)) {
      const n = (text.match(/\?/g) ?? []).length;
      await k.raw(text, bindings.slice(at, at + n) as Knex.RawBinding[]);
      at += n;
    }
    log(`  ${what}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };
  // The seeded tables' indexes that back no constraint, dropped for the load.
  const { rows } = await k.raw(
    `select i.indexname as name, i.indexdef as def from pg_indexes i
      where i.schemaname = current_schema() and i.tablename = any(?) and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
    [SEEDED_TABLES],
  );
  for (const r of rows) await k.raw(`drop index "${r.name}"`);
  const indexes: string[] = rows.map((r: { def: string }) => r.def);
  // Two years of history and 30 days ahead; created in order over the history.
  const [now, historyDays] = [Date.now(), 730];
  await step(
    'workspaces, statuses, projects',
    `insert into workspaces (id, name, plan) select ${ws('n')}, 'Workspace ' || n, 'BUSINESS' from generate_series(1, ${W}) n;
     insert into post_statuses (id, workspace_id, category, title, is_default, position)
       select 'pst_r' || ${pad('n')} || '_' || c.position, ${ws('n')}, c.category, initcap(c.category), true, c.position
         from generate_series(1, ${W}) n, unnest(?::text[]) with ordinality as c(category, position);
     insert into projects (id, workspace_id, type, slug, display_name, timezone)
       select ${proj('n')}, ${ws('n')}, 'PERSONAL_BRAND', 'project-' || n, 'Project ' || n,
              (array['Europe/Paris', 'America/New_York', 'UTC', 'Asia/Tokyo'])[1 + n % 4]
         from generate_series(1, ${W}) n`,
    [[...STATUS_CATEGORIES]],
  );
  // Statuses: 55 % published (in the past), 15 % scheduled (the next 30 days), 20 % drafts,
  // 5 % in review, 3 % failed, 2 % deleted drafts.
  await step(
    'posts',
    `insert into posts (id, workspace_id, project_id, status, title, title_auto, content, content_type, scheduled_at, published_at,
                        network_post_urn, created_at, updated_at, deleted_at)
     select 'post_r' || lpad(i::text, 12, '0'), ${ws('w')}, ${proj('w')}, st, 'Post ' || i, false,
            'Post ' || i || ': ' || repeat(md5(i::text) || ' ', 1 + i % 6) || E'\\n#bench',
            case when i % 7 = 0 then 'CAROUSEL' else 'PERSONAL' end,
            case when st in ('scheduled', 'failed_to_publish') then to_timestamp(?) + ((i::bigint * 7919) % (30 * 24)) * interval '1 hour'
                 when st = 'published' then created + interval '2 days' end,
            case when st = 'published' then least(created + interval '2 days', to_timestamp(?)) end,
            case when st = 'published' then 'urn:li:share:' || (7000000000 + i) end,
            created, created, case when st = 'draft' and i % 50 = 7 then created + interval '1 day' end
       from generate_series(1, ${P}) i,
            lateral (select ${workspaceOf(draw('i'), W)} as w,
                            to_timestamp(?) + (i::float8 / ${P}) * ${historyDays} * interval '1 day' as created,
                            (hashint4(i) & 2147483647)::float8 / 2147483648 as v) d,
            lateral (select case when v < 0.55 then 'published' when v < 0.70 then 'scheduled' when v < 0.90 then 'draft'
                                 when v < 0.95 then 'waitingApproval' when v < 0.98 then 'failed_to_publish' else 'draft' end as st) s`,
    [now / 1000, now / 1000, (now - historyDays * 86_400_000) / 1000],
  );
  await step(
    'metrics',
    `insert into post_metric_state (post_id, workspace_id, project_id, network_post_urn, published_at, impressions, reactions, comments, reshares,
                                    samples, sync_state, last_synced_at)
     select id, workspace_id, project_id, network_post_urn, published_at, 200 + (hashtext(id) & 4095), 5 + (hashtext(id) & 63),
            hashtext(id) & 7, hashtext(id) & 3, 3, 'ok', published_at + interval '3 days'
       from posts where status = 'published';
     insert into post_metric_days (project_id, day, workspace_id, impressions, reactions, comments, reshares)
     select project_id, (published_at at time zone 'UTC')::date, workspace_id, sum(impressions), sum(reactions), sum(comments), sum(reshares)
       from post_metric_state where published_at > now() - interval '120 days' group by 1, 2, 3`,
  );
  // Every tenth post: a note (half of them on a calendar slot), an idea; every fifth: a job and a media asset.
  await step(
    'notes, slots, ideas',
    `insert into notes (id, workspace_id, project_id, content, created_at, updated_at)
     select 'note_r' || lpad(id_n::text, 12, '0'), workspace_id, project_id, 'Note on ' || title, created_at, created_at
       from (select substr(id, 7)::bigint as id_n, * from posts where substr(id, 7)::bigint % 10 = 1) p;
     insert into calendar_slots (id, workspace_id, project_id, date, note_id, created_at)
     select 'slot_rn' || substr(id, 7), workspace_id, project_id, created_at + interval '3 days', id, created_at
       from notes where substr(id, 7)::bigint % 20 = 1;
     insert into calendar_slots (id, workspace_id, project_id, date, post_id, created_at)
     select 'slot_rp' || substr(id, 7), workspace_id, project_id, to_timestamp(?) + ((substr(id, 7)::bigint * 31) % (30 * 24)) * interval '1 hour', id, created_at
       from posts where status = 'draft' and deleted_at is null and substr(id, 7)::bigint % 4 = 0;
     insert into ideas (id, workspace_id, project_id, title, content, status, scheduled_for, linked_post_id, created_at, updated_at)
     select 'idea_r' || substr(id, 7), workspace_id, project_id, 'Idea ' || substr(id, 7), 'An idea', case when status = 'draft' then 'in_production' else 'inbox' end,
            case when substr(id, 7)::bigint % 3 = 0 then (created_at + interval '5 days')::date end,
            case when status = 'draft' then id end, created_at, created_at
       from posts where substr(id, 7)::bigint % 10 = 3`,
    [now / 1000],
  );
  await step(
    'jobs, media',
    `insert into jobs (id, workspace_id, project_id, type, status, input, result, started_at, completed_at, created_at, updated_at, cost_cents)
     select 'job_r' || substr(id, 7), workspace_id, project_id, 'post_generation', 'DONE', '{"prompt":"bench"}', jsonb_build_object('postId', id),
            created_at, created_at + interval '20 seconds', created_at, created_at, 3
       from posts where substr(id, 7)::bigint % 5 = 2;
     insert into media_assets (id, workspace_id, project_id, key, sha256, mime_type, bytes, width, height, title, created_at)
     select 'med_r' || substr(id, 7), workspace_id, project_id, 'media/' || workspace_id || '/' || md5(id) || '.png',
            md5(id) || md5(id || 'x'), 'image/png', 200000 + (hashtext(id) & 65535), 1200, 627, 'Image ' || substr(id, 7), created_at
       from posts where substr(id, 7)::bigint % 5 = 4`,
  );
  await step(
    'webhooks',
    `insert into webhook_endpoints (id, workspace_id, url, name, events, secret_last4, created_at)
     select 'whe_r' || ${pad('n')}, ${ws('n')}, 'https://hooks.example.com/' || n, 'Hook', array['post.published'], 'abcd', to_timestamp(?)
       from generate_series(1, ${W}) n;
     insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event_type, event_created_at, status, attempt_count, delivered_at, created_at, updated_at)
     select 'whd_r' || substr(id, 7), workspace_id, 'whe_r' || substr(workspace_id, 6), 'evt_r' || substr(id, 7), 'post.published', published_at,
            case when substr(id, 7)::bigint % 100 = 0 then 'failed' else 'delivered' end, 1, published_at, published_at, published_at
       from posts where status = 'published' and substr(id, 7)::bigint % 2 = 0`,
    [(now - (historyDays + 1) * 86_400_000) / 1000],
  );
  await step(
    'knowledge',
    `insert into knowledge_documents (id, workspace_id, project_id, scope, type, name, status, language, regconfig, body, content_hash, chunk_count, created_at, updated_at)
     select 'kb_r' || substr(id, 7), workspace_id, null, 'WORKSPACE', 'text', 'Notes ' || substr(id, 7), 'ready', 'en', 'english',
            'Body of ' || title, md5(id) || md5(id), 5, created_at, created_at
       from posts where substr(id, 7)::bigint % 100 = 5;
     insert into knowledge_chunks (document_id, workspace_id, ordinal, content, tsv)
     select d.id, d.workspace_id, o, t, to_tsvector('english', t)
       from knowledge_documents d, generate_series(0, 4) o,
            lateral (select (array['Pricing strategy for enterprise customers and renewal', 'Hiring engineers: interviews, onboarding and retention',
                                   'Content marketing on LinkedIn: hooks, carousels and posting times', 'Product launch checklist with press and customers',
                                   'Remote team rituals, async writing and meetings'])[1 + abs(hashtext(d.id) + o) % 5]
                            || ' ' || d.name || ' ' || md5(d.id || o) as t) c`,
  );
  // The secondary indexes again, two at a time: what two cores take.
  const t = performance.now();
  const queue = [...indexes];
  await Promise.all(
    [0, 1].map(async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await k.raw(next);
    }),
  );
  log(`  ${indexes.length} indexes: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  await step('vacuum analyze', `vacuum analyze ${SEEDED_TABLES.join(', ')}`);
  log(`seeded ${P} posts over ${W} workspaces in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return seededWorkspaces(k, P);
}

/** The measured workspaces of a database seeded with `posts` posts, with fresh credentials: the largest, and the tail's at rank ½. */
export async function seededWorkspaces(k: Knex, posts: number): Promise<Seeded> {
  const W = Math.max(2, Math.round(posts / 100));
  return { posts, largest: await credentials(k, 1), small: await credentials(k, 2 + Math.floor((W - 1) / 2)) };
}

/** Workspace n's credentials (SeededWorkspace): the OAuth token with the rows the code exchange writes (lib/oauth/tokens.ts). */
async function credentials(k: Knex, n: number): Promise<SeededWorkspace> {
  const id = String(n).padStart(10, '0');
  const [workspaceId, projectId, userId, grantId, clientId] = [`org_r${id}`, `proj_r${id}`, `usr_r${n}`, `grt_r${n}`, 'cli_rbench'];
  const key = `${API_KEY_PREFIXES.live}bench${id}${'k'.repeat(25)}`;
  const scopes = [...ALL_SCOPES];
  const keyScopes = scopes.filter((s) => !(OAUTH_ONLY_SCOPES as readonly string[]).includes(s));
  // Once per database: a kept database (--keep) has them already.
  const once = (table: string, row: Record<string, unknown>, q: Knex = k) => q(table).insert(row).onConflict('id').ignore();
  const apiKey = { id: `key_r${n}`, workspace_id: workspaceId, name: 'bench', mode: 'live', key_hash: keyedHash(key) };
  await once('api_keys', { ...apiKey, last4: key.slice(-4), scopes: keyScopes });
  await once('users', { id: userId, email: `admin${n}@bench.example.com`, name: 'Admin' });
  await once('memberships', { id: `mem_r${n}`, workspace_id: workspaceId, user_id: userId, role: 'admin' });
  const client = { client_name: 'Bench', redirect_uris: ['https://bench.example.com/cb'], grant_types: ['authorization_code'] };
  await once('oauth_clients', { id: clientId, ...client, response_types: ['code'] });
  const plaintext = randomToken(ACCESS_TOKEN_PREFIX);
  await k.transaction(async (trx) => {
    const grant = { user_id: userId, client_id: clientId, workspace_id: workspaceId, default_project_id: projectId };
    await once('oauth_grants', { id: grantId, ...grant, access_level: 'full', requested_scopes: scopes, scopes }, trx);
    const family = { grantId, clientId, userId, workspaceId, defaultProjectId: projectId, scopes, codeHash: null, resource: null };
    await insertAccessToken(trx, await createFamily(trx, family), plaintext, scopes, null, 30 * 86_400);
  });
  const [{ n: posts }] = (await k.raw('select count(*)::int as n from posts where workspace_id = ?', [workspaceId])).rows;
  return { workspaceId, projectId, key, adminToken: plaintext, endpointId: `whe_r${id}`, posts };
}
