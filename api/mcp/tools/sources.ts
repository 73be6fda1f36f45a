import { createSource, getSource } from '../../operations/sources/sources';
import { followJob } from '../progress';
import { operationTool, READ, WRITE } from '../tool';

// spec 4.9 source tools over the operations of POST /v1/sources and GET /v1/sources/{id}
// (docs/sources.md "Doors"). create_source_text and create_source_file are the two variants of
// the one create operation; the tool fixes nothing but documents its own variant.

export const getSourceTool = operationTool(getSource, {
  name: 'get_source',
  title: 'Get a source',
  description:
    'One source: name, status (Processing, Success, Failed), a preview of its text (at most 2,000 characters; previewTruncated says whether there is more), language, durationSeconds for recordings, and topics and hooks once status is Success. Requires sources:read.',
  // spec 4.9: the agent tool needs sources:read where REST asks notes:read (4.1).
  scopes: { allOf: ['sources:read'] },
  scopesReplaceOperation: true,
  annotations: { ...READ, idempotentHint: true },
});

export const createSourceTextTool = operationTool(createSource, {
  name: 'create_source_text',
  title: 'Create a text source',
  description:
    'Saves text (at most 100,000 characters) as a source of a project, synchronously: `{ "type": "text", "text": "...", "name"?: "..." }`. Answers the source with its topics and hooks. Requires sources:write.',
  scopes: { allOf: ['sources:write'] },
  annotations: { ...WRITE },
  defaultProject: true,
  idempotent: true,
});

export const createSourceFileTool = operationTool(createSource, {
  name: 'create_source_file',
  title: 'Create a source from a file',
  description:
    'Queues a SOURCE_INGEST job for a file: `type: file` with `uploadId` (from create_upload_url, purpose source, after the PUT) or inline with `content_base64` (plain base64, no data: prefix, at most 25 MB decoded), `mimeType` and `filename`. Text, Markdown, PDF and DOCX are read; audio and video are transcribed. The same file sent twice is ingested once (the same job answers). Answers the job; result.sourceId names the source when DONE. With a progressToken the call follows the job with notifications/progress and answers the finished job. Requires sources:write.',
  scopes: { allOf: ['sources:write'] },
  annotations: { ...WRITE, openWorldHint: true },
  defaultProject: true,
  idempotent: true,
  // A text source is answered at once (create_source_text's variant); a file queues its ingest.
  queuesJob: (args) => args.type !== 'text',
  finish: async (ctx, body) => (ctx.progress ? followJob(ctx, body) : body),
});
