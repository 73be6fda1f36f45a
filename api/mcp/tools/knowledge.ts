import { createKnowledge, getKnowledge, listKnowledge } from '../../operations/knowledge/knowledge';
import { followJob } from '../progress';
import { operationTool, READ, WRITE } from '../tool';

// spec 4.9: add_to_knowledge_base (knowledge:write, async). get_knowledge_document and
// search_knowledge_base are additions (spec 9.3), over the same operations as REST
// (docs/knowledge.md). A file is inline (content_base64 + mimeType + filename, spec 4.9) or an
// uploadId (create_upload_url with purpose knowledge first).

export const addToKnowledgeBaseTool = operationTool(createKnowledge, {
  name: 'add_to_knowledge_base',
  title: 'Add to the knowledge base',
  description:
    'Queues the ingest of a document into the knowledge base (job type KNOWLEDGE_INGEST): type text (text), file (inline: content_base64 as plain base64 without a data: prefix, at most 25 MB decoded, with mimeType and filename; or uploadId of an upload with purpose knowledge; text, Markdown, PDF and DOCX are read, audio and video transcribed), url (a public web page; its readable article is kept) or youtube (videoId or a YouTube url; its transcript is kept). projectId defaults to the pinned project; scope WORKSPACE makes it workspace-wide (admins). Generated posts of the project draw on it. Answers the job; result.documentId names the document when DONE. With a progressToken the call follows the job with notifications/progress and answers the finished job. Requires knowledge:write.',
  annotations: { ...WRITE, openWorldHint: true },
  idempotent: true,
  queuesJob: true,
  finish: async (ctx, body) => (ctx.progress ? followJob(ctx, body) : body),
});

export const getKnowledgeDocumentTool = operationTool(getKnowledge, {
  name: 'get_knowledge_document',
  title: 'Get a knowledge document',
  description:
    'One knowledge document (kb_*): name, type, tags, language, chunkCount, sourceUrl and a text preview of at most 2,000 characters (textPreviewTruncated says whether there is more; the full body is never returned). Requires knowledge:read.',
  annotations: { ...READ, idempotentHint: true },
});

export const searchKnowledgeBaseTool = operationTool(listKnowledge, {
  name: 'search_knowledge_base',
  title: 'Search the knowledge base',
  description:
    'Knowledge documents of the workspace (and, with projectId, of that project plus workspace-wide ones). With query, a full-text search ranked by relevance; each hit carries `snippet`, the best matching passage with matches between **. Cursor-paginated. Requires knowledge:read.',
  annotations: { ...READ, idempotentHint: true },
});
