import type { JobProgress, JobStatus } from '../jobs/row';
import type { JobType } from '../jobs/kinds';
import { WorkspaceScopedModel } from './scoped';

/** spec 2.12: the API's view of a generation workflow. */
export class Job extends WorkspaceScopedModel {
  static tableName = 'jobs';
  static jsonAttributes = ['input', 'progress', 'result'];

  declare id: string;
  declare workspace_id: string;
  declare project_id: string | null;
  declare type: JobType;
  declare status: JobStatus;
  declare input: Record<string, unknown>;
  declare progress: JobProgress | null;
  declare result: Record<string, unknown> | null;
  declare error_code: string | null;
  declare error_message: string | null;
  declare attempt_count: number;
  declare estimated_completion_ms: number;
  declare created_by: string | null;
  declare started_at: Date | null;
  declare completed_at: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}
