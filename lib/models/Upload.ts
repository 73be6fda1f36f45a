import { WorkspaceScopedModel } from './scoped';

/** A minted upload (spec 2.14): a presigned object a later call (source, knowledge, media) consumes. */
export class Upload extends WorkspaceScopedModel {
  static tableName = 'uploads';

  declare id: string;
  declare workspace_id: string;
  declare project_id: string | null;
  declare purpose: string;
  declare file_name: string;
  declare content_type: string;
  declare bytes: string | number;
  declare object_key: string;
  declare expires_at: Date;
  declare created_at: Date;
}
