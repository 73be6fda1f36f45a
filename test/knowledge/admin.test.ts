import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { storedDocument, workspaceWithKey } from '../support/factories';
import { fails, ok } from '../support/admin';

// bin/admin knowledge (docs/knowledge.md "Operating"), each command in its own process.

describe('bin/admin knowledge', function () {
  this.timeout(120_000);

  it('list, inspect, reindex, delete; unknown ids fail with exit 1', async () => {
    const ws = await workspaceWithKey();
    const { documentId, jobId } = await storedDocument(
      { workspaceId: ws.workspace.id, projectId: ws.project.id },
      { text: 'Operators can reindex documents about lighthouses.', name: 'Lighthouses' },
    );
    const list = await ok(['knowledge', 'list', '--workspace', ws.workspace.id]);
    assert.deepEqual(
      list.map((d: { id: string }) => d.id),
      [documentId],
    );
    const shown = await ok(['knowledge', 'inspect', '--id', documentId]);
    assert.equal(shown.regconfig, 'english');
    assert.equal(shown.indexedChunks, 1);
    assert.equal(shown.jobId, jobId);
    await db()('knowledge_chunks').where({ document_id: documentId }).delete();
    assert.deepEqual(await ok(['knowledge', 'reindex', '--id', documentId]), { id: documentId, chunkCount: 1 });
    assert.equal((await ok(['knowledge', 'inspect', '--id', documentId])).indexedChunks, 1);
    await fails(['knowledge', 'resync', '--id', documentId], 1, /no URL knowledge document/);
    assert.deepEqual(await ok(['knowledge', 'delete', '--id', documentId]), { id: documentId, deleted: true });
    assert.equal((await db()('knowledge_chunks').where({ document_id: documentId })).length, 0);
    await fails(['knowledge', 'inspect', '--id', documentId], 1, /no knowledge document/);
    await fails(['knowledge', 'list', '--workspace', ws.workspace.id, '--limit', 'x'], 2, /--limit/);
  });
});
