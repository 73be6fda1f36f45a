import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { config } from '../lib/config';
import { finishingJob, finishJob } from '../lib/jobs/finish';
import { progressNow, type JobStatus } from '../lib/jobs/row';
import { IngestError } from '../lib/ingest/errors';
import { extractText } from '../lib/ingest/extract';
import type { Transcriber } from '../lib/ingest/transcription';
import { LlmError } from '../lib/llm/errors';
import type { InsightExtractor } from '../lib/llm/insights';
import type { UploadRow } from '../lib/media/uploads';
import { Source, Upload } from '../lib/models';
import type { SourceIngestInput } from '../lib/sources/sources';
import type { ObjectStore } from '../lib/storage/objectStore';
import { chargeJob, codedFailure, loadRunningJob, lockJob, startQueuedJob, type StartOutcome } from './jobRows';

// Activities of SOURCE_INGEST jobs (docs/sources.md "The ingest job"; the job envelope of spec
// 2.12 / 3.2). Row transitions lock the job row and check its status first, so a retry after a
// lost answer finds its own work done; the costly step writes only its source's fields, so a
// retried step overwrites them with the same values. What the paid calls cost is added to the
// job row per attempt and settled against the AI meters when the job ends (finishingJob).

export interface SourceIngestDeps {
  db: Knex;
  store: () => ObjectStore;
  transcriber: Transcriber;
  insights: InsightExtractor;
}

export function createSourceIngestActivities({ db, store, transcriber, insights }: SourceIngestDeps) {
  const progress = (jobId: string, fraction: number, message: string) =>
    db('jobs')
      .where({ id: jobId, status: 'RUNNING' })
      .update({ progress: JSON.stringify(progressNow(fraction, message)), updated_at: db.fn.now() });

  return {
    async startSourceJob(jobId: string): Promise<StartOutcome> {
      return startQueuedJob(db, jobId, 0.1, 'Reading the file');
    },

    /** Reads the upload, extracts (or transcribes) its text, finds topics and hooks, and writes them to the source. */
    async ingestSourceFile(jobId: string): Promise<{ sourceId: string }> {
      const { attempt } = Context.current().info;
      const job = await loadRunningJob(db, jobId, ['j.workspace_id', 'j.project_id']);
      await db('jobs').where({ id: jobId }).update({ attempt_count: attempt, updated_at: db.fn.now() });
      const input = job.input as SourceIngestInput;
      const upload = (await Upload.forWorkspace(job.workspace_id, db).findById(input.uploadId)) as UploadRow | undefined;
      if (!upload) throw ApplicationFailure.nonRetryable(`Upload ${input.uploadId} no longer exists (expired).`, 'upload_expired');
      const bytes = await store().get(upload.object_key);
      if (!bytes) throw ApplicationFailure.nonRetryable(`Upload ${input.uploadId} has no object.`, 'upload_without_object');
      await progress(jobId, 0.3, 'Extracting the text');
      const signal = Context.current().cancellationSignal;
      try {
        const extracted = await extractText({ bytes, mimeType: upload.content_type, filename: upload.file_name }, { transcriber });
        // Each paid call is charged as soon as it answered, so a later failure does not lose it.
        await chargeJob(db, jobId, extracted.costCents);
        const text = extracted.text.slice(0, config.sources.storedTextMaxChars);
        await progress(jobId, 0.7, 'Finding topics and hooks');
        const found = await insights.extract({ text, language: extracted.language }, { signal });
        await chargeJob(db, jobId, found.costCents);
        await Source.forWorkspace(job.workspace_id, db)
          .findById(input.sourceId)
          .patch({
            text,
            language: extracted.language,
            duration_seconds: extracted.durationSeconds ?? null,
            topics: found.topics,
            hooks: found.hooks,
            updated_at: db.fn.now(),
          });
      } catch (err) {
        // A call the provider billed although it failed (silence transcribed, an unusable answer).
        if (err instanceof IngestError || err instanceof LlmError) await chargeJob(db, jobId, err.costCents);
        throw codedFailure(err, attempt);
      }
      return { sourceId: input.sourceId };
    },

    /** DONE with `{ sourceId }` and the source `Success`, in one transaction. */
    async completeSourceJob(input: { jobId: string; sourceId: string }): Promise<{ status: JobStatus | 'MISSING' }> {
      return finishingJob(db, input.jobId, async (trx) => {
        const job = await lockJob(trx, input.jobId);
        if (!job) return { status: 'MISSING' };
        if (job.status !== 'RUNNING') return { status: job.status };
        await Source.forWorkspace(job.workspace_id, trx)
          .findById(input.sourceId)
          .patch({ status: 'Success', error_code: null, updated_at: trx.fn.now() });
        await finishJob(trx, job.id, { status: 'DONE', progress: progressNow(1, 'Done'), result: { sourceId: input.sourceId } });
        return { status: 'DONE' };
      });
    },
  };
}

export type SourceIngestActivities = ReturnType<typeof createSourceIngestActivities>;
