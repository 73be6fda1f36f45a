import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import type { JobRow } from '../../../lib/jobs/row';
import { presentJob } from '../../../lib/presenters/jobs';
import { answerWithJob, startQueuedJob } from '../../../lib/jobs/queue';
import { storeInlineFile } from '../../../lib/ingest/inlineUpload';
import { usableUpload } from '../../../lib/media/uploads';
import { newId } from '../../../lib/ids';
import { Source } from '../../../lib/models';
import { queueSourceIngest, withdrawSourceIngest } from '../../../lib/sources/ingest';
import { guessLanguage } from '../../../lib/ingest/language';
import { builtinInsights } from '../../../lib/llm/insights';
import type { SourceRow } from '../../../lib/sources/sources';
import { presentSource } from '../../../lib/presenters/sources';
import { jobSchema, SPEND_ERRORS } from '../jobs/schema';
import { single } from '../../output';
import { defineOperation, depsOf } from '../../operation';
import { createSourceInput, getSourceInput, sourceSchema } from './schema';
import { requireProject } from '../projects/resolve';

// spec 2.11 / 4.5 sources (docs/sources.md). POST /v1/sources: `type: text` is synchronous and
// answers the Source; `type: file` answers a SOURCE_INGEST Job (spec 1 rule 3). GET answers the
// preview. Client-role accounts are refused both (spec 5.4: every write, and reads of sources).

/** The request body edge of POST /v1/sources: the base64 of the 25 MB inline maximum (spec 8) plus room for the rest. */
export const SOURCE_BODY_LIMIT_BYTES = Math.ceil(config.media.mcpInlineMaxBytes / 3) * 4 + 64 * 1024;

/** The source with its job's outcome: a file source whose job failed or was cancelled reads `Failed`. */
async function loadPresented(reach: Parameters<typeof Source.visibleTo>[0], sourceId: string) {
  const q = Source.visibleTo(reach);
  type Joined = SourceRow & { job_status: string | null; job_error_code: string | null };
  const row = (await q
    .leftJoin('jobs', 'jobs.id', 'sources.job_id')
    .where('sources.id', sourceId)
    .select('sources.*', 'jobs.status as job_status', 'jobs.error_code as job_error_code')
    .first()) as unknown as Joined | undefined;
  if (!row) return undefined;
  if (row.status === 'Processing' && (row.job_status === 'FAILED' || row.job_status === 'CANCELLED')) {
    row.status = 'Failed';
    row.error_code = row.job_status === 'CANCELLED' ? 'job_cancelled' : row.job_error_code;
  }
  return row;
}

export const createSource = defineOperation({
  name: 'sources.create',
  summary:
    'Create a source: `type: text` answers the Source at once; `type: file` (uploadId, or inline content_base64 + mimeType + filename) answers a SOURCE_INGEST job whose result is { sourceId }.',
  kind: 'write',
  scopes: { allOf: ['sources:write'] },
  clientRole: 'deny',
  input: createSourceInput,
  output: single(sourceSchema.or(jobSchema)),
  // A file source's ingest reserves AI spend as generation does (spec 4.4, 7.2; docs/sources.md "Spend").
  errors: ['payload_too_large', ...SPEND_ERRORS],
  handler: async (ctx, input) => {
    const { auth } = ctx;
    const store = depsOf(ctx).objectStore;
    const project = await requireProject(auth, input.projectId!);

    if (input.type === 'text') {
      const text = input.text!;
      // Synchronous (spec 1 rule 3): the built-in extractor's topics and hooks, no model call.
      const found = builtinInsights(text);
      const [row] = await db()('sources')
        .insert({
          id: newId('source'),
          workspace_id: auth.workspaceId,
          project_id: project.id,
          type: 'text',
          name: input.name ?? text.replace(/\s+/g, ' ').trim().slice(0, 80),
          mime_type: 'text/plain',
          status: 'Success',
          text,
          language: guessLanguage(text),
          topics: JSON.stringify(found.topics),
          hooks: JSON.stringify(found.hooks),
          created_by: auth.principal.id,
        })
        .returning('*');
      return { data: presentSource(row as SourceRow) };
    }

    // type: file. The inline variant stores the bytes as an upload keyed by their SHA-256 (spec 4.9).
    const uploadId =
      input.uploadId ??
      (await storeInlineFile(
        {
          workspaceId: auth.workspaceId,
          projectId: project.id,
          purpose: 'source',
          content_base64: input.content_base64!,
          mimeType: input.mimeType!,
          filename: input.filename!,
        },
        store,
      ));
    const { row: upload } = await usableUpload(auth.workspaceId, uploadId, 'source', undefined, store);

    // spec 4.9: one source per upload. The unique (workspace, upload) index settles concurrent
    // submits: the second waits for the first's commit and then finds its source.
    const outcome = await db().transaction(async (trx) => {
      const id = newId('source');
      const inserted = await trx('sources')
        .insert({
          id,
          workspace_id: auth.workspaceId,
          project_id: project.id,
          type: 'file',
          name: input.name ?? upload.file_name,
          file_name: upload.file_name,
          mime_type: upload.content_type,
          bytes: upload.bytes,
          status: 'Processing',
          upload_id: upload.id,
          created_by: auth.principal.id,
        })
        .onConflict(['workspace_id', 'upload_id'])
        .ignore()
        .returning('*');
      if (inserted.length > 0) {
        const source = inserted[0] as SourceRow;
        return { job: await queueSourceIngest(trx, source, auth.principal.id), fresh: true, sourceId: source.id, previous: null };
      }
      const existing = (await Source.forWorkspace(auth.workspaceId, trx)
        .where('sources.upload_id', upload.id)
        .forUpdate()
        .first()) as SourceRow;
      const job = existing.job_id ? ((await trx('jobs').where({ id: existing.job_id }).first()) as JobRow | undefined) : undefined;
      // The same upload again: its job (queued, running or done) answers. Only a failed or
      // cancelled ingest is run again.
      if (job && job.status !== 'FAILED' && job.status !== 'CANCELLED') return { job, fresh: false, sourceId: existing.id, previous: null };
      return {
        job: await queueSourceIngest(trx, existing, auth.principal.id),
        fresh: true,
        sourceId: existing.id,
        previous: existing.job_id,
      };
    });
    const job = outcome.job;
    if (outcome.fresh) {
      await startQueuedJob(job, { withdraw: () => withdrawSourceIngest(job.id, outcome.sourceId, outcome.previous) });
    }
    return answerWithJob(job, input.wait_for_completion_ms, (row) => ({ data: presentJob(row) }));
  },
});

export const getSource = defineOperation({
  name: 'sources.get',
  summary: 'One source: a preview of its text (at most 2,000 characters); topics and hooks once its status is Success.',
  kind: 'read',
  // spec 4.1: notes:read in the REST catalogue; the agent tool asks sources:read (4.9).
  scopes: { allOf: ['notes:read'] },
  clientRole: 'deny',
  input: getSourceInput,
  output: single(sourceSchema),
  handler: async ({ auth }, input) => {
    const row = await loadPresented(auth, input.sourceId);
    if (!row) throw errors.notFound('source');
    return { data: presentSource(row) };
  },
});
