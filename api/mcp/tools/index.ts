import type { ToolDefinition } from '../tool';
import { cancelJobTool, generatePostTool, getJobTool, listJobsTool } from './jobs';
import { createUploadUrlTool, generateImageTool, getMediaTool, importMediaTool, listMediaTool, setPostMediaTool } from './media';
import { createNoteTool, getNoteTool, listNotesTool } from './notes';
import { createPostDraftTool, deletePostTool, getPostTool, listPostStatusesTool, listPostsTool, schedulePostTool, updatePostTool } from './posts';
import { getProjectTool, listProjectsTool } from './projects';
import { getWorkspaceTool, listWorkspacesTool, switchWorkspaceTool } from './workspaces';

// The tool catalogue, in the order of the spec 4.9 table. Tools of that table whose REST twin
// is not built here are absent rather than stubbed: get_source, get_analytics_overview,
// list_post_analytics, search_viral_posts, list_calendar, create_source_text,
// create_source_file, add_to_knowledge_base. The media tools after the table are additions.
export const TOOLS: readonly ToolDefinition[] = [
  getWorkspaceTool,
  listWorkspacesTool,
  switchWorkspaceTool,
  listProjectsTool,
  getProjectTool,
  listNotesTool,
  getNoteTool,
  listPostsTool,
  getPostTool,
  listPostStatusesTool,
  listJobsTool,
  getJobTool,
  createNoteTool,
  createPostDraftTool,
  updatePostTool,
  schedulePostTool,
  deletePostTool,
  cancelJobTool,
  generatePostTool,
  createUploadUrlTool,
  importMediaTool,
  listMediaTool,
  getMediaTool,
  setPostMediaTool,
  generateImageTool,
];

const byName = new Map(TOOLS.map((t) => [t.name, t]));

export function findTool(name: string): ToolDefinition | undefined {
  return byName.get(name);
}

/**
 * What the tools can use, for the 401 challenge's scope hint and the protected-resource
 * metadata: every named scope of the tools and their operations, and offline_access so that a
 * host gets a refresh token.
 */
export const MCP_SCOPES: readonly string[] = (() => {
  const out = new Set<string>();
  const add = (rule: ToolDefinition['scopes']) => {
    if (rule === 'any') return;
    ('allOf' in rule ? rule.allOf : rule.anyOf).forEach((s) => out.add(s));
  };
  for (const t of TOOLS) add(t.scopes);
  out.add('offline_access');
  return [...out];
})();
