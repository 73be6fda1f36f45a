import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';

// The layer boundaries of eslint.config.js (issue 11 section 4, CONVENTIONS.md habits 7, 9 and 15),
// run through ESLint's Node API on in-memory files: each deliberate violation must be reported,
// and the allowed forms must not be.

const root = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: root });

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

async function assertReported(file: string, code: string, pattern: RegExp) {
  const found = await problems(file, code);
  assert.equal(found.length, 1, `${file}: expected one problem, got ${JSON.stringify(found)}`);
  assert.match(found[0]!, pattern);
}

async function assertClean(file: string, code: string) {
  assert.deepEqual(await problems(file, code), [], file);
}

describe('lint: layer boundaries', function () {
  this.timeout(60_000);

  it('lib/ must not import api/, at any depth', async () => {
    await assertReported(
      'lib/example.ts',
      `import { scoped } from '../api/auth/context';\nexport const x = scoped;\n`,
      /^layers\/imports: lib\/ must not import api\//,
    );
    await assertReported(
      'lib/posts/example.ts',
      `import { scoped } from '../../api/auth/context';\nexport const x = scoped;\n`,
      /lib\/ must not import api\//,
    );
    await assertReported('lib/posts/example.ts', `export { scoped } from '../../api/auth/context';\n`, /lib\/ must not import api\//);
    await assertReported('lib/posts/example.ts', `export const load = () => import('../../api/app');\n`, /lib\/ must not import api\//);
    // Types too (issue 38 section 1): an output shape lives in lib/presenters/, not in api/.
    await assertReported(
      'lib/posts/example.ts',
      `import type { AuthContext } from '../../api/auth/context';\nexport type A = AuthContext;\n`,
      /lib\/ must not import api\//,
    );
    await assertReported(
      'lib/generation/example.ts',
      `import { type Job } from '../../api/operations/jobs/schema';\nexport type J = Job;\n`,
      /lib\/ must not import api\//,
    );
    await assertReported(
      'lib/posts/example.ts',
      `export type { Post } from '../../api/operations/posts/schema';\n`,
      /lib\/ must not import api\//,
    );
    await assertClean('lib/posts/example.ts', `import type { Post } from '../presenters/posts';\nexport type P = Post;\n`);
    await assertClean('lib/posts/example.ts', `import { db } from '../db';\nimport { z } from 'zod';\nexport const x = [db, z];\n`);
    // api/ importing lib/ is the intended direction.
    await assertClean('api/example.ts', `import { db } from '../lib/db';\nexport const x = db;\n`);
  });

  it('Temporal names are never strings: workflows, signals and queries go by their definitions', async () => {
    await assertReported(
      'lib/example.ts',
      `declare const c: { workflow: { start(...a: unknown[]): unknown } };\nexport const x = () => c.workflow.start('publishPost', {});\n`,
      /^no-restricted-syntax: Temporal name as a string/,
    );
    await assertReported(
      'test/example.test.ts',
      `declare const h: { signal(...a: unknown[]): unknown };\nexport const x = () => h.signal('scheduleChanged');\n`,
      /^no-restricted-syntax: Temporal name as a string/,
    );
    // SQL handed to a pg client is not a Temporal name.
    await assertClean('lib/example.ts', `declare const c: { query(q: string): unknown };\nexport const x = () => c.query('select 1');\n`);
  });

  it('activities/ and workers/ must not import api/', async () => {
    await assertReported(
      'activities/example.ts',
      `import { findProject } from '../api/operations/projects/queries';\nexport const x = findProject;\n`,
      /activities\/ must not import api\//,
    );
    await assertReported(
      'workers/example.ts',
      `import { createApp } from '../api/app';\nexport const x = createApp;\n`,
      /workers\/ must not import api\//,
    );
    await assertReported(
      'activities/example.ts',
      `import type { AuthContext } from '../api/auth/context';\nexport type A = AuthContext;\n`,
      /activities\/ must not import api\//,
    );
    await assertReported(
      'workers/example.ts',
      `import type { ApiDeps } from '../api/deps';\nexport type D = ApiDeps;\n`,
      /workers\/ must not import api\//,
    );
    await assertClean('activities/example.ts', `import { db } from '../lib/db';\nexport const x = db;\n`);
  });

  it('bench/ must not import test/', async () => {
    await assertReported(
      'bench/example.ts',
      `import { workspaceWithKey } from '../test/support/factories';\nexport const x = workspaceWithKey;\n`,
      /^layers\/imports: bench\/ must not import test\//,
    );
    await assertReported(
      'bench/harness/example.ts',
      `export const load = () => import('../../test/support/contract');\n`,
      /bench\/ must not import test\//,
    );
    await assertClean(
      'bench/example.ts',
      `import { checkResponse } from '../tooling/responseContract';\nexport const x = checkResponse;\n`,
    );
  });

  it('lib/ and activities/ import no workflow values: they start workflows through lib/temporal/start/', async () => {
    await assertReported(
      'lib/example.ts',
      `import { publishPostWorkflow } from '../workflows/publishPost';\nexport const x = publishPostWorkflow;\n`,
      /^layers\/imports: lib\/ must not import workflows\//,
    );
    await assertReported(
      'lib/temporal/start/example.ts',
      `import { scheduleChangedSignal } from '../../../workflows/publishPost';\nexport const x = scheduleChangedSignal;\n`,
      /lib\/ must not import workflows\//,
    );
    await assertReported(
      'lib/posts/example.ts',
      `export const load = () => import('../../workflows/maintenance');\n`,
      /lib\/ must not import workflows\//,
    );
    await assertReported(
      'activities/example.ts',
      `import { webhookEndpointWorkflow } from '../workflows/webhookEndpoint';\nexport const x = webhookEndpointWorkflow;\n`,
      /^layers\/imports: activities\/ must not import workflows\//,
    );
    await assertReported(
      'activities/example.ts',
      `export { webhookDeliveriesReadySignal } from '../workflows/webhookEndpoint';\n`,
      /activities\/ must not import workflows\//,
    );
    // The workflow function's type (for a typed start by name) and the contracts are allowed.
    await assertClean(
      'lib/temporal/start/example.ts',
      [
        `import type { publishPostWorkflow } from '../../../workflows/publishPost';`,
        `import { PUBLISH_POST, scheduleChangedSignal } from '../contracts/publishPost';`,
        `export const x = [PUBLISH_POST, scheduleChangedSignal];`,
        `export type W = typeof publishPostWorkflow;`,
        '',
      ].join('\n'),
    );
    // An activity names a workflow's types through its contract, not the workflow file.
    await assertReported(
      'activities/example.ts',
      `import type { webhookEndpointWorkflow } from '../workflows/deliverWebhook';\nexport type W = typeof webhookEndpointWorkflow;\n`,
      /activities\/ must not import workflows\//,
    );
    await assertClean(
      'activities/example.ts',
      `import { WEBHOOK_ENDPOINT } from '../lib/temporal/contracts/deliverWebhook';\nimport { wakeEndpoint } from '../lib/temporal/start/webhookEndpoint';\nexport const x = [WEBHOOK_ENDPOINT, wakeEndpoint];\n`,
    );
  });

  it('workflow contracts are pure: workflows may import them, and they import only what workflows may', async () => {
    await assertClean(
      'workflows/example.ts',
      `import { scheduleChangedSignal } from '../lib/temporal/contracts/publishPost';\nexport const x = scheduleChangedSignal;\n`,
    );
    await assertReported(
      'lib/temporal/contracts/example.ts',
      `import { config } from '../../config';\nexport const x = config;\n`,
      /lib\/temporal\/contracts\/ may import only .*not \.\.\/\.\.\/config/,
    );
    await assertReported(
      'lib/temporal/contracts/example.ts',
      `import { Client } from '@temporalio/client';\nexport const x = Client;\n`,
      /not @temporalio\/client/,
    );
    await assertClean(
      'lib/temporal/contracts/example.ts',
      [
        `import { defineSignal } from '@temporalio/workflow';`,
        `import type { ScheduleSnapshot } from '../../publishing/schedule';`,
        `import { jobWorkflowId } from './jobs';`,
        `export const x = [defineSignal, jobWorkflowId];`,
        `export type S = ScheduleSnapshot;`,
        '',
      ].join('\n'),
    );
  });

  it('api/mcp must not import api/rest', async () => {
    await assertReported(
      'api/mcp/example.ts',
      `import { authorize } from '../rest/adapter';\nexport const x = authorize;\n`,
      /api\/mcp\/ must not import api\/rest\//,
    );
    await assertReported(
      'api/mcp/tools/example.ts',
      `import { authorize } from '../../rest/adapter';\nexport const x = authorize;\n`,
      /api\/mcp\/ must not import api\/rest\//,
    );
    await assertClean('api/mcp/example.ts', `import { defineOperation } from '../operation';\nexport const x = defineOperation;\n`);
  });

  it('workflows/ import only @temporalio/workflow, types and the listed pure modules', async () => {
    await assertReported(
      'workflows/example.ts',
      `import { db } from '../lib/db';\nexport const x = db;\n`,
      /workflows\/ may import only .*not \.\.\/lib\/db/,
    );
    await assertReported(
      'workflows/example.ts',
      `import { randomUUID } from 'node:crypto';\nexport const x = randomUUID;\n`,
      /not node:crypto/,
    );
    await assertReported(
      'workflows/example.ts',
      `import { type PublishingActivities, createPublishingActivities } from '../activities/publishing';\nexport type A = PublishingActivities;\nexport const x = createPublishingActivities;\n`,
      /not \.\.\/activities\/publishing/,
    );
    await assertReported('workflows/example.ts', `export { config } from '../lib/config';\n`, /not \.\.\/lib\/config/);
    await assertClean(
      'workflows/example.ts',
      [
        `import { proxyActivities, sleep } from '@temporalio/workflow';`,
        `import type { PublishingActivities } from '../activities/publishing';`,
        `import { type WebhookActivities } from '../activities/webhooks';`,
        `import { retryDelayMs } from '../lib/webhooks/schedule';`,
        `import { publishPostWorkflow } from './publishPost';`,
        `export const x = [proxyActivities, sleep, retryDelayMs, publishPostWorkflow];`,
        `export type A = PublishingActivities | WebhookActivities;`,
        '',
      ].join('\n'),
    );
  });

  it('the service reaches workspace tables only through the models, never with a hand-written workspace condition', async () => {
    const reported = /^no-restricted-syntax: Workspace condition written by hand/;
    const header = `import { db } from '../lib/db';\ndeclare const id: string;\n`;
    await assertReported('api/example.ts', `${header}export const x = db()('posts').where({ workspace_id: id, id });\n`, reported);
    await assertReported('api/example.ts', `${header}export const x = db()('posts as p').where({ 'p.workspace_id': id });\n`, reported);
    await assertReported('api/operations/example.ts', `${header}export const x = db()('posts').where('workspace_id', id);\n`, reported);
    await assertReported(
      'api/operations/example.ts',
      `${header}export const x = db()('posts as p').where('p.workspace_id', id);\n`,
      reported,
    );
    await assertReported(
      'api/operations/example.ts',
      `${header}export const x = db()('ideas').andWhere('ideas.workspace_id', id);\n`,
      reported,
    );
    await assertReported(
      'api/example.ts',
      `${header}const t = 'posts';\nexport const x = db()(t).where(\`\${t}.workspace_id\`, id);\n`,
      reported,
    );
    await assertReported('api/example.ts', `${header}export const x = db()('posts').whereRaw('workspace_id = ?', [id]);\n`, reported);
    // Every folder of the service and its operator tooling, not only api/.
    const raw = (lib: string) =>
      `import { db } from '${lib}/db';\ndeclare const id: string;\nexport const x = db()('posts').where('workspace_id', id);\n`;
    for (const [file, lib] of [
      ['lib/example.ts', '.'],
      ['lib/knowledge/example.ts', '..'],
      ['activities/example.ts', '../lib'],
      ['workers/example.ts', '../lib'],
      ['admin/example.ts', '../lib'],
      ['admin/cli/example.ts', '../../lib'],
      ['tooling/example.ts', '../lib'],
      ['tooling/example.ts', '../lib'],
    ] as const)
      await assertReported(file, raw(lib), reported);
    await assertReported(
      'admin/example.ts',
      `import { db } from '../lib/db';\ndeclare const id: string;\nexport const x = db()('api_keys').where({ workspace_id: id }).select('id');\n`,
      reported,
    );
    // The model's scoped query is the way (also as a knex builder); a join on the column is not a read of one workspace.
    await assertClean(
      'api/operations/example.ts',
      `import { Post } from '../../lib/models';\ndeclare const id: string;\nexport const x = Post.forWorkspace(id).where('posts.id', id);\n`,
    );
    await assertClean(
      'admin/example.ts',
      `import { ApiKey } from '../lib/models';\ndeclare const id: string;\nexport const x = ApiKey.knexForWorkspace(id).select('id');\n`,
    );
    await assertClean(
      'api/example.ts',
      `${header}export const x = db()('memberships as m').join('workspaces as w', 'w.id', 'm.workspace_id').where('m.id', id);\n`,
    );
    // test/ and bench/ look at the database from outside, across workspaces.
    await assertClean('test/example.test.ts', raw('../lib'));
    await assertClean('bench/example.ts', raw('../lib'));
  });

  it('tests may not be focused with .only', async () => {
    // Spelled through a variable so that a text search for focused tests does not find these
    // deliberate examples.
    const only = '.only';
    await assertReported(
      'test/unit/example.test.ts',
      `describe('a', () => { it${only}('b', () => {}); });\n`,
      /^no-restricted-syntax: Focused test/,
    );
    await assertReported('test/unit/example.test.ts', `describe${only}('a', () => {});\n`, /Focused test/);
    await assertReported('test/unit/example.test.ts', `context${only}('a', () => {});\n`, /Focused test/);
    await assertClean('test/unit/example.test.ts', `describe('a', () => { it('b', () => {}); });\n`);
  });
});
