import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { NetworkClient } from '../lib/network/client';
import { createPublishingActivities } from './publishing';

// Activities are built by factories that receive their dependencies; workers/ wires them.
export interface ActivityDeps {
  db: Knex;
  network: NetworkClient;
  temporal: () => Promise<Client>;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPublishingActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
