import type { SourceStatus, SourceType } from '../sources/sources';
import { WorkspaceScopedModel } from './scoped';

/** spec 2.11: a source (text given inline, or extracted from a file by a SOURCE_INGEST job). */
export class Source extends WorkspaceScopedModel {
  static tableName = 'sources';
  static jsonAttributes = ['topics', 'hooks'];

  declare id: string;
  declare workspace_id: string;
  declare project_id: string;
  declare type: SourceType;
  declare name: string;
  declare file_name: string | null;
  declare mime_type: string | null;
  declare bytes: string | number | null;
  declare status: SourceStatus;
  declare text: string | null;
  declare language: string | null;
  declare duration_seconds: number | null;
  declare topics: string[] | null;
  declare hooks: string[] | null;
  declare upload_id: string | null;
  declare job_id: string | null;
  declare error_code: string | null;
  declare created_by: string | null;
  declare created_at: Date;
  declare updated_at: Date;
}
