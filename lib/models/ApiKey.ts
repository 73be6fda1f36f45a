import { WorkspaceScopedModel } from './scoped';

/** An API key of a workspace (spec 5.1); only its hash and last four characters are kept. */
export class ApiKey extends WorkspaceScopedModel {
  static tableName = 'api_keys';
  static projectColumn = null;

  declare id: string;
  declare workspace_id: string;
  declare name: string;
  declare mode: string;
  declare key_hash: string;
  declare last4: string;
  declare scopes: string[];
  declare expires_at: Date | null;
  declare revoked_at: Date | null;
  declare last_used_at: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}
