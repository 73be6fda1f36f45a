import { WorkspaceScopedModel } from './scoped';

/** An MCP task: a job bound to the credential subject that created it (migrations/*_mcp_tasks.ts). */
export class McpTask extends WorkspaceScopedModel {
  static tableName = 'mcp_tasks';
  static idColumn = ['id', 'subject'];
  static projectColumn = null;

  /** The job id. */
  declare id: string;
  declare subject: string;
  declare workspace_id: string;
  declare tool: string;
  declare ttl_ms: number;
  declare created_at: Date;
  declare expires_at: Date;
}
