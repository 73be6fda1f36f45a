import { storeInlineFile } from '../../../lib/ingest/inlineUpload';
import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { presentJob } from '../../../lib/presenters/jobs';
import { answerWithJob, enqueueJob } from '../../../lib/jobs/queue';
import { budgetTargetOf, loadAiLimits } from '../../../lib/spend/meters';
import { Project } from '../../../lib/models';
import {
  DOCUMENT_SELECT,
  searchDocuments,
  visibleDocuments,
  type DocumentRow,
  type KnowledgeScope,
} from '../../../lib/knowledge/documents';
import { presentDocument } from '../../../lib/presenters/knowledge';
import type { KnowledgeJobInput } from '../../../lib/knowledge/ingest';
import { videoIdOf } from '../../../lib/knowledge/youtube';
import { usableUpload } from '../../../lib/media/uploads';
import { jobSchema, SPEND_ERRORS } from '../jobs/schema';
import { page, single } from '../../output';
import { defineOperation, depsOf } from '../../operation';
import { keysetPage, parseLimit, decodeCursor, encodeCursor } from '../../pagination';
import { checkProjectFilter, resolveProjectOrDefault } from '../projects/resolve';
import { createKnowledgeInput, getKnowledgeInput, knowledgeDocumentSchema, knowledgeHitSchema, listKnowledgeInput } from './schema';

// spec 4.5 POST /v1/knowledge and GET /v1/knowledge/{documentId}; the list and search
// (GET /v1/knowledge?projectId&query) are 9.3 additions. docs/knowledge.md.

export const createKnowledge = defineOperation({
  name: 'knowledge.create',
  summary: 'Queue the ingest of a text, file (uploadId), URL or YouTube video into the knowledge base; answers a KNOWLEDGE_INGEST job.',
  kind: 'write',
  scopes: { allOf: ['knowledge:write'] },
  clientRole: 'deny',
  input: createKnowledgeInput,
  output: single(jobSchema),
  // A file ingest reserves AI spend as generation does (docs/knowledge.md "Spend").
  errors: SPEND_ERRORS,
  handler: async (ctx, input) => {
    const { auth } = ctx;
    const store = depsOf(ctx).objectStore;
    const scope: KnowledgeScope = input.scope ?? 'PROJECT';
    let projectId: string | null = null;
    if (scope === 'PROJECT') {
      projectId = (await resolveProjectOrDefault(auth, input.projectId)).id;
    } else {
      if (input.projectId !== undefined) throw errors.unprocessable('A WORKSPACE document belongs to no project: leave `projectId` out.');
      // Workspace-wide knowledge reaches every project's generations: not for members narrowed to some projects.
      if (auth.projectIds) throw errors.forbiddenProject('Only workspace admins add workspace-wide knowledge.');
    }
    // The inline variant stores the bytes as an upload keyed by their SHA-256 (spec 4.9).
    const uploadId =
      input.type !== 'file'
        ? undefined
        : (input.uploadId ??
          (await storeInlineFile(
            {
              workspaceId: auth.workspaceId,
              projectId,
              purpose: 'knowledge',
              content_base64: input.content_base64!,
              mimeType: input.mimeType!,
              filename: input.filename!,
            },
            store,
          )));
    if (uploadId !== undefined) await usableUpload(auth.workspaceId, uploadId, 'knowledge', undefined, store);
    const jobInput: KnowledgeJobInput = {
      type: input.type,
      scope,
      projectId,
      tags: input.tags ?? [],
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.folderId !== undefined ? { folderId: input.folderId } : {}),
      ...(input.language !== undefined ? { language: input.language } : {}),
      ...(input.type === 'text' ? { text: input.text! } : {}),
      ...(uploadId !== undefined ? { uploadId } : {}),
      ...(input.type === 'url' ? { url: input.url! } : {}),
      ...(input.type === 'youtube' ? { videoId: videoIdOf(input.videoId ?? input.url!)! } : {}),
    };
    const project = projectId ? await Project.forWorkspace(auth.workspaceId).findById(projectId).select('id', 'type') : null;
    if (project === undefined) throw errors.notFound('project');
    // A file may be a recording, which is transcribed (a paid model): it reserves and settles AI
    // spend as generation does (spec 4.4, 7.2). Text, pages and video transcripts call no model.
    const paid = input.type === 'file';
    const job = await enqueueJob({
      workspaceId: auth.workspaceId,
      createdBy: auth.principal.id,
      project,
      type: 'KNOWLEDGE_INGEST',
      input: jobInput,
      estimatedMs: config.knowledge.estimatedCompletionMs,
      limits: paid ? await loadAiLimits(db(), auth.workspaceId, budgetTargetOf(project)) : null,
    });
    return answerWithJob(job, input.wait_for_completion_ms, (row) => ({ data: presentJob(row) }));
  },
});

export const getKnowledge = defineOperation({
  name: 'knowledge.get',
  summary: 'One knowledge document: its preview (at most 2,000 characters), never the full body.',
  kind: 'read',
  scopes: { allOf: ['knowledge:read'] },
  clientRole: 'deny',
  input: getKnowledgeInput,
  output: single(knowledgeDocumentSchema),
  handler: async ({ auth }, input) => {
    await checkProjectFilter(auth, input.projectId);
    const q = visibleDocuments(db(), auth).where('d.id', input.documentId);
    // With a projectId, the document must be that project's or workspace-wide.
    if (input.projectId !== undefined) q.where((w) => w.where('d.scope', 'WORKSPACE').orWhere('d.project_id', input.projectId!));
    const row = (await q.first(DOCUMENT_SELECT(db()))) as DocumentRow | undefined;
    if (!row) throw errors.notFound('knowledge document');
    return { data: presentDocument(row) };
  },
});

export const listKnowledge = defineOperation({
  name: 'knowledge.list',
  summary:
    'Knowledge documents, newest first; with `query`, a full-text search ranked by relevance, each with the matching passage (`snippet`). Cursor-paginated.',
  kind: 'read',
  scopes: { allOf: ['knowledge:read'] },
  clientRole: 'deny',
  input: listKnowledgeInput,
  output: page(knowledgeHitSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit, config.knowledge.listDefault, config.knowledge.listMax);
    await checkProjectFilter(auth, input.projectId);
    const filters = { list: 'knowledge', projectId: input.projectId, query: input.query };
    if (input.query !== undefined) {
      // Ranked results page by position; the cursor is bound to the query like any filter.
      const pos = await decodeCursor(input.cursor, filters);
      const offset = pos ? Number(pos.id) : 0;
      if (!Number.isInteger(offset) || offset < 0) throw errors.badCursor();
      const { hits, hasMore } = await searchDocuments(db(), auth, { query: input.query, projectId: input.projectId, limit, offset });
      return {
        // Added to presentDocument's object, not spread into a new one.
        data: hits.map((h) => Object.assign(presentDocument(h.document), { rank: h.rank, snippet: h.snippet })),
        pagination: {
          next_cursor: hasMore ? encodeCursor({ createdAt: new Date(0).toISOString(), id: String(offset + limit) }, filters) : null,
          has_more: hasMore,
        },
      };
    }
    const q = visibleDocuments(db(), auth).select(DOCUMENT_SELECT(db()));
    if (input.projectId !== undefined) q.where((w) => w.where('d.scope', 'WORKSPACE').orWhere('d.project_id', input.projectId!));
    return keysetPage<DocumentRow, ReturnType<typeof presentDocument>>(q, {
      limit,
      cursor: input.cursor,
      filters,
      table: 'd',
      present: presentDocument,
    });
  },
});
