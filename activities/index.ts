import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { createPostWriter, type PostWriter } from '../lib/llm/client';
import type { NetworkClient } from '../lib/network/client';
import { createAnalyticsActivities } from './analytics';
import { createGenerationActivities } from './generation';
import { instrumentDeliveryPass, instrumentPublish } from './instrument';
import { createMaintenanceActivities } from './maintenance';
import { createPublishingActivities } from './publishing';
import { createUploadActivities } from './uploads';
import { createImageGenerationActivities } from './imageGeneration';
import { createImageGenerator, type ImageGenerator } from '../lib/media/imageGenerator';
import { objectStore, type ObjectStore } from '../lib/storage/objectStore';
import { createReviewActivities } from './review';
import { createEngagementActivities } from './engagement';
import { createWebhookActivities } from './webhooks';
import { createSourceIngestActivities } from './sourceIngest';
import { createTranscriber, type Transcriber } from '../lib/ingest/transcription';
import { createInsightExtractor, type InsightExtractor } from '../lib/llm/insights';
import { createKnowledgeActivities } from './knowledge';
import { config } from '../lib/config';
import { createTranscriptClient, type TranscriptClient } from '../lib/knowledge/youtube';
import { systemResolver, type Resolver } from '../lib/outbound/resolve';

// Activities are built by factories that receive their dependencies; workers/ wires them.
export interface ActivityDeps {
  db: Knex;
  network: NetworkClient;
  temporal: () => Promise<Client>;
  /** The post writer for generation jobs; the configured LLM (or the built-in writer) when omitted. */
  writer?: PostWriter;
  /** Object storage (uploads, media); the configured S3 store when omitted. */
  store?: () => ObjectStore;
  /** Image generation jobs' source of images; the configured images API (or the built-in renderer) when omitted. */
  images?: ImageGenerator;
  /** Audio and video transcription for file sources; the configured API (TRANSCRIPTION_URL) when omitted. */
  transcriber?: Transcriber;
  /** Topics and hooks of sources; the configured LLM (or the built-in extractor) when omitted. */
  insights?: InsightExtractor;
  /** YouTube ingest's transcript service; the configured one (or the local simulator) when omitted. */
  transcripts?: TranscriptClient;
  /** DNS for URL ingest; the system resolver when omitted (tests pass a fake). */
  resolve?: Resolver;
}

export function createActivities(deps: ActivityDeps) {
  const publishing = createPublishingActivities(deps);
  const webhooks = createWebhookActivities(deps);
  return {
    ...publishing,
    // Metrics of publish outcomes and lag, webhook delivery outcomes (./instrument.ts).
    publishPost: instrumentPublish(publishing.publishPost),
    ...webhooks,
    deliverDueWebhooks: instrumentDeliveryPass(webhooks.deliverDueWebhooks),
    ...createUploadActivities({ db: deps.db, store: deps.store ?? objectStore }),
    ...createImageGenerationActivities({ db: deps.db, images: deps.images ?? createImageGenerator(), store: deps.store ?? objectStore }),
    ...createGenerationActivities({ db: deps.db, writer: deps.writer ?? createPostWriter() }),
    ...createKnowledgeActivities({
      db: deps.db,
      store: deps.store ?? objectStore,
      transcripts:
        deps.transcripts ??
        createTranscriptClient({
          baseUrl: config.knowledge.youtubeTranscriptUrl,
          port: config.knowledge.youtubeSimulatorPort,
          timeoutMs: config.knowledge.youtubeTimeoutMs,
        }),
      resolve: deps.resolve ?? systemResolver,
    }),
    ...createAnalyticsActivities({ db: deps.db, network: deps.network }),
    ...createMaintenanceActivities({ db: deps.db, temporal: deps.temporal }),
    ...createReviewActivities({ db: deps.db }),
    ...createEngagementActivities({ db: deps.db, network: deps.network }),
    ...createSourceIngestActivities({
      db: deps.db,
      store: deps.store ?? objectStore,
      transcriber: deps.transcriber ?? createTranscriber(),
      insights: deps.insights ?? createInsightExtractor(),
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
