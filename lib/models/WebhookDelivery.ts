import { WorkspaceScopedModel } from './scoped';

/** The columns of `webhook_deliveries` (spec 2.14) the API reads. */
export interface WebhookDeliveryColumns {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  status: string;
  attempt_count: number;
  last_error: string | null;
  failure_reason: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

// Column properties come from the interface of the same name, as in ./Project.ts.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface WebhookDelivery extends WebhookDeliveryColumns {}

/** One event's delivery to one endpoint (spec 2.14, 3.5); lib/webhooks writes them, the API lists them. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class WebhookDelivery extends WorkspaceScopedModel {
  static tableName = 'webhook_deliveries';
  static projectColumn = null;
}
