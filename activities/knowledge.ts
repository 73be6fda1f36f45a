import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { finishingJob, finishJob } from '../lib/jobs/finish';
import { progressNow, type JobStatus } from '../lib/jobs/row';
import { IngestError } from '../lib/ingest/errors';
import { FetchError } from '../lib/outbound/guardedFetch';
import type { Resolver } from '../lib/outbound/resolve';
import { readSource, resyncUrlDocument, storeDocument, type KnowledgeJobInput } from '../lib/knowledge/ingest';
import type { TranscriptClient } from '../lib/knowledge/youtube';
import type { ObjectStore } from '../lib/storage/objectStore';
import { chargeJob, codedFailure, loadRunningJob, lockJob, startQueuedJob, type StartOutcome } from './jobRows';

// Activities of KNOWLEDGE_INGEST jobs (docs/knowledge.md; the job envelope of spec 2.12 / 3.2
// shared with generation jobs) and of the URL re-sync schedule. The document is keyed by its
// job, so a retried ingest lands on the document its earlier attempt stored.

export interface KnowledgeDeps {
  db: Knex;
  store: () => ObjectStore;
  transcripts: TranscriptClient;
  resolve: Resolver;
}

export function createKnowledgeActivities({ db, store, transcripts, resolve }: KnowledgeDeps) {
  return {
    async startKnowledgeJob(jobId: string): Promise<StartOutcome> {
      return startQueuedJob(db, jobId, 0.1, 'Reading the source');
    },

    /** Reads the source and stores the document with its chunks; answers its id. */
    async ingestKnowledgeDocument(jobId: string): Promise<{ documentId: string; chunkCount: number }> {
      const { attempt } = Context.current().info;
      const job = await loadRunningJob(db, jobId, ['j.id', 'j.workspace_id']);
      await db('jobs')
        .where({ id: jobId })
        .update({ attempt_count: attempt, updated_at: db.fn.now(), progress: JSON.stringify(progressNow(0.3, 'Reading the source')) });
      const input = job.input as KnowledgeJobInput;
      try {
        const source = await readSource(db, job.workspace_id, input, { store, transcripts, resolve }, Context.current().cancellationSignal);
        // Charged per attempt, settled when the job ends (finishingJob), as generation's calls are.
        await chargeJob(db, jobId, source.costCents ?? 0);
        await db('jobs')
          .where({ id: jobId })
          .update({ progress: JSON.stringify(progressNow(0.7, 'Indexing the document')), updated_at: db.fn.now() });
        return await storeDocument(db, { id: jobId, workspace_id: job.workspace_id }, input, source);
      } catch (err) {
        // A recording transcribed to silence was billed all the same.
        if (err instanceof IngestError) await chargeJob(db, jobId, err.costCents);
        throw codedFailure(err, attempt);
      }
    },

    /** RUNNING → DONE with `{ documentId }`. */
    async completeKnowledgeJob(input: {
      jobId: string;
      documentId: string;
      chunkCount: number;
    }): Promise<{ status: JobStatus | 'MISSING' }> {
      return finishingJob(db, input.jobId, async (trx) => {
        const job = await lockJob(trx, input.jobId);
        if (!job) return { status: 'MISSING' };
        if (job.status !== 'RUNNING') return { status: job.status };
        await finishJob(trx, job.id, {
          status: 'DONE',
          progress: progressNow(1, 'Done'),
          result: { documentId: input.documentId, chunkCount: input.chunkCount },
        });
        return { status: 'DONE' };
      });
    },

    /** URL documents not synced for `olderThanSeconds`, oldest first (the re-sync schedule's batch). */
    async dueUrlDocuments(input: { olderThanSeconds: number; limit: number }): Promise<string[]> {
      const rows = await db('knowledge_documents')
        .where({ type: 'url' })
        .where((w) =>
          w.whereNull('last_synced_at').orWhereRaw(`last_synced_at <= now() - make_interval(secs => ?)`, [input.olderThanSeconds]),
        )
        .orderBy('last_synced_at', 'asc')
        .limit(input.limit)
        .select('id');
      return rows.map((r) => r.id as string);
    },

    /** One URL document re-fetched; re-indexed only when its content changed. */
    async resyncKnowledgeDocument(documentId: string): Promise<{ changed: boolean; error?: string }> {
      try {
        const r = await resyncUrlDocument(db, documentId, resolve);
        return { changed: r.changed };
      } catch (err) {
        // A page that is gone or refused now keeps its last indexed text; the next round tries again.
        if (err instanceof FetchError || err instanceof IngestError) return { changed: false, error: err.code };
        throw err;
      }
    },
  };
}

export type KnowledgeActivities = ReturnType<typeof createKnowledgeActivities>;
