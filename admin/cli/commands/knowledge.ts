import { defineNoun, flag } from '../registry';

// Operator commands for the knowledge base (docs/knowledge.md "Operating"): add (through the
// API's knowledge.create), list, inspect, reindex (rewrite chunks from the stored body), resync
// (re-fetch a URL document now), delete.

const SOURCES = ['text', 'file', 'url', 'youtube'] as const;

/** Types a document file is read as when --mime-type is not given (the extraction sniffs it again). */
const MIME_BY_EXTENSION: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.doc': 'application/msword',
  '.rtf': 'application/rtf',
};

export default defineNoun('knowledge', 'Knowledge-base documents.', {
  add: {
    summary: 'Add a document (text, file, URL or YouTube video) to a project or the whole workspace: a KNOWLEDGE_INGEST job.',
    synopsis:
      '--workspace org_x (--project proj_x | --scope WORKSPACE) (--text TEXT | --file PATH | --url URL | --youtube ID|URL) [--name NAME] [--tag TAG ...] [--language LANG] [--mime-type TYPE]',
    flags: {
      workspace: flag.workspace,
      project: { value: 'proj_x', help: 'the project the document belongs to (scope PROJECT)' },
      scope: { choices: ['PROJECT', 'WORKSPACE'], help: 'WORKSPACE: every project of the workspace draws on it (default PROJECT)' },
      text: { value: 'TEXT', help: 'the document text' },
      file: { value: 'PATH', help: 'a text, Markdown, PDF or Word file' },
      'mime-type': { value: 'TYPE', help: 'with --file: its media type (default: from the extension)' },
      url: { value: 'URL', help: 'a web page (fetched through the URL guard, re-synced later)' },
      youtube: { value: 'ID|URL', help: 'a YouTube video id or URL (its transcript)' },
      name: { value: 'NAME', help: 'document name' },
      tag: { multiple: true, value: 'TAG', help: 'a tag' },
      language: { value: 'LANG', help: 'language tag, e.g. en or pt-BR (default: detected)' },
    },
    examples: [
      '--workspace org_x --project proj_x --text "We ship every Tuesday." --name "Release policy"',
      '--workspace org_x --scope WORKSPACE --file ./brand-guide.pdf --tag brand',
      '--workspace org_x --project proj_x --youtube https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    ],
    check(args) {
      const given = SOURCES.filter((s) => args.has(s));
      if (given.length !== 1) throw args.usage('give one of --text, --file, --url, --youtube');
      if (args.has('mime-type') && !args.has('file')) throw args.usage('--mime-type goes with --file');
      const scope = args.string('scope') ?? 'PROJECT';
      if (scope === 'PROJECT' && !args.has('project')) throw args.usage('give --project proj_x, or --scope WORKSPACE');
      if (scope === 'WORKSPACE' && args.has('project')) throw args.usage('a WORKSPACE document belongs to no project: leave --project out');
    },
    async run(args) {
      const [{ addKnowledgeDocument }, fs, path] = await Promise.all([
        import('../../support'),
        import('node:fs/promises'),
        import('node:path'),
      ]);
      let file: { bytes: Buffer; mimeType: string; filename: string } | undefined;
      if (args.has('file')) {
        const filePath = args.need('file');
        const mimeType = args.string('mime-type') ?? MIME_BY_EXTENSION[path.extname(filePath).toLowerCase()];
        if (!mimeType) throw args.usage(`cannot tell the type of ${path.basename(filePath)}; give --mime-type`);
        const bytes = await fs.readFile(filePath).catch((err: NodeJS.ErrnoException) => {
          throw new Error(`cannot read ${filePath}: ${err.code ?? err.message}`);
        });
        file = { bytes, mimeType, filename: path.basename(filePath) };
      }
      return addKnowledgeDocument({
        workspaceId: args.need('workspace'),
        projectId: args.string('project'),
        scope: (args.string('scope') ?? 'PROJECT') as 'PROJECT' | 'WORKSPACE',
        name: args.string('name'),
        tags: args.list('tag'),
        language: args.string('language'),
        text: args.string('text'),
        file,
        url: args.string('url'),
        youtube: args.string('youtube'),
      });
    },
  },
  list: {
    summary: "A workspace's knowledge documents, newest first.",
    flags: {
      workspace: flag.workspace,
      project: flag.onlyProject,
      limit: flag.count('at most N documents (default 50)'),
    },
    examples: ['--workspace org_x --project proj_x'],
    check(args) {
      const limit = args.string('limit');
      if (limit !== undefined && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000))
        throw args.usage('--limit must be an integer from 1 to 1000');
    },
    async run(args) {
      const { listDocuments } = await import('../../knowledge');
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
      const { inspectDocument } = await import('../../knowledge');
      return inspectDocument(args.need('id'));
    },
  },
  reindex: {
    summary: "Rewrite a document's chunks and tsvectors from its stored text.",
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { reindex } = await import('../../knowledge');
      return reindex(args.need('id'));
    },
  },
  resync: {
    summary: 'Re-fetch a URL document now (through the URL guard); re-indexed only when its content changed.',
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { resync } = await import('../../knowledge');
      return resync(args.need('id'));
    },
  },
  delete: {
    summary: 'Delete a document and its chunks.',
    flags: { id: { required: true, value: 'kb_x', help: 'document id' } },
    async run(args) {
      const { deleteDocument } = await import('../../knowledge');
      return deleteDocument(args.need('id'));
    },
  },
});
