import { WorkspaceScopedModel } from './scoped';

/** A network account connection (spec 2.6); shared by the projects that publish through it. */
export class Connection extends WorkspaceScopedModel {
  static tableName = 'network_connections';
  static projectColumn = null;

  declare id: string;
  declare workspace_id: string;
  declare network_person_id: string | null;
  declare display_name: string | null;
  declare vanity_name: string | null;
  declare picture_url: string | null;
  declare access_token_enc: string | null;
  declare refresh_token_enc: string | null;
  declare access_token_expires_at: Date | null;
  declare refresh_token_expires_at: Date | null;
  declare connection_status: string;
  declare last_validated_at: Date | null;
  declare consecutive_failures: number;
  declare last_failure_at: Date | null;
  declare last_error: string | null;
  declare revoked_at: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}
