import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { createPostWriter, type PostWriter } from '../lib/llm/client';
import type { NetworkClient } from '../lib/network/client';
import { createAnalyticsActivities } from './analytics';
import { createGenerationActivities } from './generation';
import { instrumentDelivery, instrumentPublish } from './instrument';
import { createPublishingActivities } from './publishing';
import { createWebhookActivities } from './webhooks';

// Activities are built by factories that receive their dependencies; workers/ wires them.
export interface ActivityDeps {
  db: Knex;
  network: NetworkClient;
  temporal: () => Promise<Client>;
  /** The post writer for generation jobs; the configured LLM (or the built-in writer) when omitted. */
  writer?: PostWriter;
}

export function createActivities(deps: ActivityDeps) {
  const publishing = createPublishingActivities(deps);
  const webhooks = createWebhookActivities(deps);
  return {
    ...publishing,
    // Metrics of publish outcomes and lag, webhook delivery outcomes (./instrument.ts).
    publishPost: instrumentPublish(deps.db, publishing.publishPost),
    ...webhooks,
    attemptWebhookDelivery: instrumentDelivery(webhooks.attemptWebhookDelivery),
    ...createGenerationActivities({ db: deps.db, writer: deps.writer ?? createPostWriter() }),
    ...createAnalyticsActivities({ db: deps.db, network: deps.network }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
