// Storage limits, "unlimited" AI limits and `usage show` from the operator CLI (issue 29 item 7):
// an override is what GET /v1/usage then shows and what the API enforces (402 on import).

import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { png } from '../media/images';
import { fails, ok } from '../support/admin';

describe('operator CLI: storage limits, unlimited AI limits, usage show', function () {
  this.timeout(300_000);
  const api = useApi();

  it("overrides a workspace's storage limits; the API shows and enforces them; --plan-default restores", async () => {
    const ws = await workspaceWithKey({ plan: 'ADVANCED' });
    const call = client(api.url, ws.key);
    const w = ws.workspace.id;
    const image = png(10, 10);
    const imported = await call('POST', '/v1/media', { body: { projectId: ws.project.id, content_base64: image.toString('base64') } });
    assert.equal(imported.status, 200, JSON.stringify(imported.body));

    const shown = await ok(['usage', 'show', '--workspace', w]);
    assert.equal(shown.workspaceId, w);
    assert.deepEqual(shown.storage, (await call('GET', '/v1/usage')).body.data.storage, 'the API answer, as a client sees it');
    assert.deepEqual(
      [shown.storage.usedBytes, shown.storage.usedAssets, shown.storage.limitBytes, shown.storage.assetLimit],
      [image.length, 1, config.plans.ADVANCED.storageLimitBytes, config.plans.ADVANCED.assetLimit],
    );

    const set = await ok([
      'workspace',
      'set-storage-limit',
      '--workspace',
      w,
      '--bytes',
      String(image.length + 10),
      '--assets',
      'unlimited',
    ]);
    assert.deepEqual([set.storageLimitBytes, set.assetLimit], [image.length + 10, 'unlimited']);
    assert.deepEqual([set.storage.limitBytes, set.storage.assetLimit], [image.length + 10, null]);
    const usage = (await call('GET', '/v1/usage')).body.data.storage;
    assert.deepEqual(
      [usage.limitBytes, usage.assetLimit, usage.percentUsed],
      [image.length + 10, null, Math.floor((image.length * 100) / (image.length + 10))],
    );
    const refused = await call('POST', '/v1/media', { body: { projectId: ws.project.id, content_base64: png(12, 12).toString('base64') } });
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error.code, refused.body.error.details.meter], ['usage_limit_exceeded', 'storage_bytes']);

    const assets = await ok(['workspace', 'set-storage-limit', '--workspace', w, '--bytes', 'unlimited', '--assets', '1']);
    assert.deepEqual([assets.storage.limitBytes, assets.storage.assetLimit], [null, 1]);
    const byCount = await call('POST', '/v1/media', { body: { projectId: ws.project.id, content_base64: png(12, 12).toString('base64') } });
    assert.equal(byCount.status, 402, JSON.stringify(byCount.body));
    assert.equal(byCount.body.error.details.meter, 'storage_assets');

    const restored = await ok(['workspace', 'set-storage-limit', '--workspace', w, '--plan-default']);
    assert.deepEqual([restored.storageLimitBytes, restored.assetLimit], [null, null]);
    assert.equal(restored.storage.limitBytes, config.plans.ADVANCED.storageLimitBytes);
    assert.equal(
      (await call('POST', '/v1/media', { body: { projectId: ws.project.id, content_base64: png(12, 12).toString('base64') } })).status,
      200,
    );

    await fails(['workspace', 'set-storage-limit', '--workspace', w], 2, /give --bytes and\/or --assets, or --plan-default/);
    await fails(
      ['workspace', 'set-storage-limit', '--workspace', w, '--bytes', 'lots'],
      2,
      /--bytes must be a whole number or "unlimited"/,
    );
    await fails(
      ['workspace', 'set-storage-limit', '--workspace', w, '--bytes', '5', '--plan-default'],
      2,
      /give --bytes and\/or --assets, or --plan-default/,
    );
    await fails(['workspace', 'set-storage-limit', '--workspace', 'org_missing', '--bytes', '5'], 1, /no workspace org_missing/);
    await fails(['usage', 'show', '--workspace', 'org_missing'], 1, /no workspace org_missing/);
    await fails(['usage', 'show', '--workspace', w, '--project', 'proj_missing'], 1, /usage\.get refused \(not_found\)/);
  });

  it('takes "unlimited" for the weekly AI budget (workspace and target) and the daily spend cap', async () => {
    const ws = await workspaceWithKey({ plan: 'ADVANCED' });
    const call = client(api.url, ws.key);
    const w = ws.workspace.id;
    await ok(['workspace', 'set-ai-budget', '--workspace', w, '--weekly-cents', '0', '--enforcement', 'block']);
    let usage = await ok(['usage', 'show', '--workspace', w, '--project', ws.project.id]);
    assert.deepEqual([usage.canGenerate, usage.blockedBy, usage.ai.unlimited], [false, 'weekly_ai_budget', false]);

    // The project's own budget, unlimited, beats the workspace's 0; the pool keeps the 0.
    const target = await ok(['budget', 'set', '--workspace', w, '--project', ws.project.id, '--weekly-cents', 'unlimited']);
    const own = target.targets.find((t: any) => t.target === ws.project.id);
    assert.deepEqual([own.ownBudgetCents, own.weeklyBudgetCents], ['unlimited', null]);
    usage = await ok(['usage', 'show', '--workspace', w, '--project', ws.project.id]);
    assert.deepEqual([usage.canGenerate, usage.ai.unlimited], [true, true]);
    assert.equal((await ok(['usage', 'show', '--workspace', w])).ai.unlimited, false);

    const wide = await ok(['workspace', 'set-ai-budget', '--workspace', w, '--weekly-cents', 'unlimited']);
    assert.equal(wide.weeklyAiBudgetCents, 'unlimited');
    assert.equal((await call('GET', '/v1/usage')).body.data.ai.unlimited, true);
    assert.equal((await ok(['budget', 'show', '--workspace', w])).workspaceWeeklyBudgetCents, 'unlimited');

    await ok(['workspace', 'set-spend-cap', '--workspace', w, '--daily-cents', '0']);
    assert.equal((await call('GET', '/v1/usage')).body.data.blockedBy, 'daily_api_spend_cap');
    const cap = await ok(['workspace', 'set-spend-cap', '--workspace', w, '--daily-cents', 'unlimited']);
    assert.equal(cap.dailySpendCapCents, 'unlimited');
    const meters = (await call('GET', '/v1/usage')).body.data;
    assert.deepEqual([meters.canGenerate, meters.apiSpend.capCents, meters.apiSpend.remainingCents], [true, null, null]);
    // A generation is admitted under the lifted limits.
    const queued = await call('POST', '/v1/posts/generations', {
      body: { projectId: ws.project.id, source: { type: 'text', text: 'Unlimited budgets still record what they spend.' } },
    });
    assert.equal(queued.status, 200, JSON.stringify(queued.body));

    await fails(
      ['workspace', 'set-spend-cap', '--workspace', w, '--daily-cents', 'infinite'],
      2,
      /--daily-cents must be a whole number or "unlimited"/,
    );
    await fails(
      ['budget', 'set', '--workspace', w, '--pool', '--weekly-cents', '-1'],
      2,
      /--weekly-cents must be a whole number or "unlimited"/,
    );
  });
});
