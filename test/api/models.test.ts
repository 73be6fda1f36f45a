import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { Connection, Job, Note, Post, Project, Workspace } from '../../lib/models';
import { workspaceWithKey } from '../support/factories';

// lib/models: the workspace-scoped builders every model read starts from (CONVENTIONS.md habits 5 and 15),
// against real Postgres. A row of another workspace, or of an unassigned project for a plain
// member, is simply not there.

async function noteIn(workspaceId: string, projectId: string) {
  const id = newId('note');
  await db()('notes').insert({ id, workspace_id: workspaceId, project_id: projectId, content: 'n' });
  return id;
}

async function jobIn(workspaceId: string, projectId: string) {
  const id = newId('job');
  await db()('jobs').insert({ id, workspace_id: workspaceId, project_id: projectId, type: 'POST_GENERATION', status: 'QUEUED' });
  return id;
}

describe('lib/models workspace scoping', () => {
  it('forWorkspace reads only the rows of that workspace', async () => {
    const a = await workspaceWithKey({ projects: 2 });
    const b = await workspaceWithKey();
    const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id).sort();

    assert.deepEqual(ids(await Project.forWorkspace(a.workspace.id)), ids(a.projects));
    assert.equal(await Project.forWorkspace(a.workspace.id).findById(b.project.id), undefined, 'a foreign id is not found');
    const connections = await Connection.forWorkspace(b.workspace.id);
    assert.deepEqual(ids(connections), [b.project.connection_id].sort());
    assert.ok(connections.every((c) => c.workspace_id === b.workspace.id));

    const note = await noteIn(a.workspace.id, a.project.id);
    assert.equal((await Note.forWorkspace(a.workspace.id).findById(note))?.content, 'n');
    assert.equal(await Note.forWorkspace(b.workspace.id).findById(note), undefined);
    assert.deepEqual(await Post.forWorkspace(b.workspace.id), []);

    assert.equal((await Workspace.current(a.workspace.id))?.id, a.workspace.id);
  });

  it('visibleTo narrows per-project tables to the assigned projects, and only those', async () => {
    const a = await workspaceWithKey({ projects: 2 });
    const [p1, p2] = a.projects as [(typeof a.projects)[0], (typeof a.projects)[0]];
    const n1 = await noteIn(a.workspace.id, p1.id);
    const n2 = await noteIn(a.workspace.id, p2.id);
    const j1 = await jobIn(a.workspace.id, p1.id);
    await jobIn(a.workspace.id, p2.id);

    const everyProject = { workspaceId: a.workspace.id, projectIds: null };
    const onlyP1 = { workspaceId: a.workspace.id, projectIds: new Set([p1.id]) };
    const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id).sort();

    assert.deepEqual(ids(await Note.visibleTo(everyProject)), [n1, n2].sort());
    assert.deepEqual(ids(await Note.visibleTo(onlyP1)), [n1]);
    assert.deepEqual(ids(await Job.visibleTo(onlyP1)), [j1]);
    assert.deepEqual(ids(await Project.visibleTo(onlyP1)), [p1.id], 'a project is narrowed by its own id');
    // Connections are per workspace, not per project: the assignment does not narrow them.
    assert.equal((await Connection.visibleTo(onlyP1)).length, (await Connection.forWorkspace(a.workspace.id)).length);
    // Another workspace's reach sees none of it, whatever project ids it names.
    const b = await workspaceWithKey();
    assert.deepEqual(await Note.visibleTo({ workspaceId: b.workspace.id, projectIds: new Set([p1.id]) }), []);
  });

  it('the scoping follows an alias, and Project.activeFor leaves archived projects out', async () => {
    const a = await workspaceWithKey({ projects: 2 });
    const b = await workspaceWithKey();
    const [p1, p2] = a.projects as [(typeof a.projects)[0], (typeof a.projects)[0]];
    const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id).sort();
    const everyProject = { workspaceId: a.workspace.id, projectIds: null };
    const onlyP1 = { workspaceId: a.workspace.id, projectIds: new Set([p1.id]) };

    // The condition names the table as the query calls it: `from projects as p where p.workspace_id …`.
    assert.deepEqual(ids(await Project.forWorkspace(b.workspace.id).alias('p').select('p.id')), [b.project.id]);
    assert.deepEqual(ids(await Project.visibleTo(onlyP1).alias('p').select('p.id')), [p1.id]);
    assert.equal(await Project.forWorkspace(a.workspace.id).alias('p').findById(b.project.id), undefined);

    // spec 2.5: an archived (operator-deleted) project is not shown, under an alias too.
    await db()('projects').where({ id: p2.id }).update({ status: 'ARCHIVED' });
    assert.deepEqual(ids(await Project.activeFor(everyProject)), [p1.id]);
    assert.deepEqual(ids(await Project.activeFor(everyProject).alias('p').select('p.id')), [p1.id]);
    assert.deepEqual(ids(await Project.visibleTo(everyProject)), [p1.id, p2.id].sort(), 'visibleTo itself does not filter on status');
    assert.deepEqual(await Project.activeFor({ workspaceId: b.workspace.id, projectIds: null }).findById(p1.id), undefined);
  });

  it('a note reads with its slot through the relation', async () => {
    const a = await workspaceWithKey();
    const note = await noteIn(a.workspace.id, a.project.id);
    const date = new Date('2030-01-07T09:00:00Z');
    await db()('calendar_slots').insert({
      id: newId('slot'),
      workspace_id: a.workspace.id,
      project_id: a.project.id,
      date,
      content_type: 'BUSINESS_INTERNAL',
      note_id: note,
    });
    const bare = await noteIn(a.workspace.id, a.project.id);
    const reach = { workspaceId: a.workspace.id, projectIds: null };
    const withSlot = await Note.visibleTo(reach).withGraphJoined('slot').where('notes.id', note).first();
    assert.equal(withSlot?.slot?.date.toISOString(), date.toISOString());
    assert.equal(withSlot?.slot?.content_type, 'BUSINESS_INTERNAL');
    const without = await Note.visibleTo(reach).withGraphJoined('slot').where('notes.id', bare).first();
    assert.equal(without?.slot, null);
  });
});
