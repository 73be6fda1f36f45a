import { defineNoun } from '../registry';

// Operator commands for the knowledge base (docs/knowledge.md "Operating"): list, inspect,
// reindex (rewrite chunks from the stored body), resync (re-fetch a URL document now), delete.

export default defineNoun('knowledge', 'Knowledge-base documents.', {
  list: {
    summary: "A workspace's knowledge documents, newest first.",
    flags: {
      workspace: { required: true, value: 'org_x', help: 'workspace id' },
      project: { value: 'proj_x', help: 'only this project' },
      limit: { value: 'N', help: 'at most N documents (default 50)' },
    },
    examples: ['--workspace org_x --project proj_x'],
    check(args) {
      const limit = args.string('limit');
      if (limit !== undefined && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000))
        throw args.usage('--limit must be an integer from 1 to 1000');
    },
    async run(args) {
      const { listDocuments } = await import('../../../lib/knowledge/admin');
      return listDocuments({
        workspaceId: args.need('workspace'),
        projectId: args.string('project'),
        limit: Number(args.string('limit') ?? 50),
      });
    },
  },
  inspect: {
    summary: 'One document with its index details (configuration, hash, chunks, job).',
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { inspectDocument } = await import('../../../lib/knowledge/admin');
      return inspectDocument(args.need('id'));
    },
  },
  reindex: {
    summary: "Rewrite a document's chunks and tsvectors from its stored text.",
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { reindex } = await import('../../../lib/knowledge/admin');
      return reindex(args.need('id'));
    },
  },
  resync: {
    summary: 'Re-fetch a URL document now (through the URL guard); re-indexed only when its content changed.',
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { resync } = await import('../../../lib/knowledge/admin');
      return resync(args.need('id'));
    },
  },
  delete: {
    summary: 'Delete a document and its chunks.',
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { deleteDocument } = await import('../../../lib/knowledge/admin');
      return deleteDocument(args.need('id'));
    },
  },
});
