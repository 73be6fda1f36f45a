import type { TransactionOrKnex } from 'objection';
import { WorkspaceScopedModel, type Reach } from './scoped';

/** spec 2.14: a receiver URL subscribed to events. Delivery (lib/webhooks) reads the table itself. */
export class WebhookEndpoint extends WorkspaceScopedModel {
  static tableName = 'webhook_endpoints';
  /** `events` is a text[] column, not JSON: objection passes arrays through as they are. */
  static jsonAttributes: string[] = [];

  declare id: string;
  declare workspace_id: string;
  /** null: workspace-wide (receives the events of every project). */
  declare project_id: string | null;
  declare url: string;
  declare name: string;
  declare events: string[];
  declare is_active: boolean;
  declare disabled_reason: string | null;
  declare disabled_at: Date | null;
  declare secret_enc: string | null;
  declare secret_last4: string;
  declare previous_secret_enc: string | null;
  declare previous_secret_expires_at: Date | null;
  declare consecutive_failures: number;
  declare last_success_at: Date | null;
  declare last_failure_at: Date | null;
  declare created_by: string | null;
  declare created_at: Date;
  declare updated_at: Date;
  declare deleted_at: Date | null;

  /**
   * The endpoints a reader may manage: the workspace's live ones; a member restricted to some
   * projects (spec 5.5) sees only endpoints bound to those projects, since a workspace-wide
   * endpoint carries every project's events.
   */
  static manageableBy(reach: Reach, trx?: TransactionOrKnex) {
    return this.visibleTo(reach, trx).whereNull('webhook_endpoints.deleted_at');
  }
}
