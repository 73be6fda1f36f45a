import { WorkspaceScopedModel } from './scoped';

/** A claimed Idempotency-Key and its stored answer (spec 8), unique per workspace. */
export class IdempotencyKey extends WorkspaceScopedModel {
  static tableName = 'idempotency_keys';
  static idColumn = ['workspace_id', 'key'];
  static projectColumn = null;
  /** The stored answer is written as JSON text and read as Postgres returns it, never re-parsed. */
  static jsonAttributes: string[] = [];

  declare workspace_id: string;
  declare key: string;
  declare operation: string;
  declare request_hash: string;
  declare state: 'in_progress' | 'done';
  declare locked_until: Date | null;
  declare response_status: number | null;
  declare response_body: unknown;
  declare created_at: Date;
}
