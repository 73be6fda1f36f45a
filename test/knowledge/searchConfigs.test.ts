import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { workspaceConfigs, workspaceRegconfigsSql } from '../../lib/knowledge/documents';
import { storedDocument, workspaceWithKey } from '../support/factories';

// The text-search configurations a search parses its query in (docs/knowledge.md "Search"):
// those of the workspace's documents, read on every search and every grounded generation. The
// read must not grow with the corpus (bench/README.md, knowledge): it probes the
// (workspace_id, regconfig) index once per configuration instead of visiting every document.

describe('knowledge: the workspace search configurations', function () {
  this.timeout(60_000);

  const addDocument = (workspaceId: string, projectId: string, language: string, text: string) =>
    storedDocument({ workspaceId, projectId }, { text, name: 'doc', language });

  it("answers the configurations of the workspace's own documents, in order, and nobody else's", async () => {
    const ws = await workspaceWithKey();
    const other = await workspaceWithKey();
    assert.deepEqual(await workspaceConfigs(db(), ws.workspace.id), []);
    await addDocument(ws.workspace.id, ws.project.id, 'fr', 'Les pommes du verger sont mûres en automne.');
    await addDocument(ws.workspace.id, ws.project.id, 'en', 'The orchard apples ripen in autumn.');
    await addDocument(ws.workspace.id, ws.project.id, 'en', 'Pears ripen later than apples.');
    await addDocument(other.workspace.id, other.project.id, 'de', 'Die Äpfel im Obstgarten reifen im Herbst.');
    assert.deepEqual(await workspaceConfigs(db(), ws.workspace.id), ['english', 'french']);
    assert.deepEqual(await workspaceConfigs(db(), other.workspace.id), ['german']);
  });

  it('reads them with index probes, not a pass over the documents', async () => {
    const ws = await workspaceWithKey();
    for (let i = 0; i < 3; i++) await addDocument(ws.workspace.id, ws.project.id, 'en', `Document ${i} about orchards.`);
    // Sequential scans off: on a table this small the planner would scan it whatever the
    // indexes; what matters is which index the statement can use.
    const plan = await db().transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const r = await trx.raw(`explain select ${workspaceRegconfigsSql('?')} as regconfigs`, [ws.workspace.id]);
      return (r.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
    });
    assert.match(plan, /Index Only Scan using knowledge_documents_regconfig/);
    assert.doesNotMatch(plan, /knowledge_documents_page/);
  });
});
