import { expandScopes } from '../../../lib/scopes';
import { toolScopeRules, type ToolDefinition } from '../tool';
import { cancelJobTool, generatePostTool, getJobTool, listJobsTool } from './jobs';
import { getAnalyticsOverviewTool, getCrossWorkspaceAnalyticsTool, listPostAnalyticsTool, searchViralPostsTool } from './analytics';
import { listCalendarTool, listCompanyPagesTool } from './calendar';
import { createIdeaTool, getIdeaTool, listIdeasTool, updateIdeaTool } from './ideas';
import { createUploadUrlTool, generateImageTool, getMediaTool, importMediaTool, listMediaTool, setPostMediaTool } from './media';
import { createNoteTool, getNoteTool, listNotesTool } from './notes';
import { addToKnowledgeBaseTool, getKnowledgeDocumentTool, searchKnowledgeBaseTool } from './knowledge';
import {
  createPostDraftTool,
  deletePostTool,
  getPostTool,
  listPostStatusesTool,
  listPostsTool,
  schedulePostTool,
  updatePostTool,
} from './posts';
import { getProjectTool, listProjectsTool } from './projects';
import { createSourceFileTool, createSourceTextTool, getSourceTool } from './sources';
import { approvePostTool, listAwaitingReviewTool, rejectPostTool, requestReviewTool } from './reviews';
import {
  getUsageTool,
  getWorkspaceContextTool,
  getWorkspaceTool,
  listTeamTool,
  listWorkspacesTool,
  switchWorkspaceTool,
} from './workspaces';

// The tool catalogue, in the order of the spec 4.9 table. Tools of that table whose REST twin
// is not built here would be absent rather than stubbed; today every row is here. The planning,
// media and knowledge reads after the table are additions.
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
  getSourceTool,
  listJobsTool,
  getJobTool,
  createNoteTool,
  createPostDraftTool,
  updatePostTool,
  schedulePostTool,
  deletePostTool,
  createSourceTextTool,
  createSourceFileTool,
  addToKnowledgeBaseTool,
  cancelJobTool,
  generatePostTool,
  // Workspace reads that REST has (spec 9.3 additions).
  getWorkspaceContextTool,
  listTeamTool,
  getUsageTool,
  // Planning additions (spec 9.3).
  listIdeasTool,
  getIdeaTool,
  createIdeaTool,
  updateIdeaTool,
  listCalendarTool,
  listCompanyPagesTool,
  getAnalyticsOverviewTool,
  listPostAnalyticsTool,
  searchViralPostsTool,
  getCrossWorkspaceAnalyticsTool,
  // Media additions (spec 9.3), beside create_upload_url of the table.
  createUploadUrlTool,
  importMediaTool,
  listMediaTool,
  getMediaTool,
  setPostMediaTool,
  generateImageTool,
  // Knowledge reads (spec 9.3 additions; docs/knowledge.md).
  getKnowledgeDocumentTool,
  searchKnowledgeBaseTool,
  // Review before publishing (docs/review.md; spec 9.3).
  requestReviewTool,
  approvePostTool,
  rejectPostTool,
  listAwaitingReviewTool,
];

const byName = new Map(TOOLS.map((t) => [t.name, t]));

export function findTool(name: string): ToolDefinition | undefined {
  return byName.get(name);
}

/**
 * What the tools can use, for the 401 challenge's scope hint and the protected-resource
 * metadata (spec 4.9 Discovery): every scope named by a registered tool's rules (its own and
 * its operation's), derived from TOOLS so that it stays true as tools are added, in the order
 * of the spec 5.2 vocabulary, and offline_access so that a host gets a refresh token.
 */
export const MCP_SCOPES: readonly string[] = (() => {
  const out = new Set<string>();
  for (const t of TOOLS) {
    for (const rule of toolScopeRules(t)) {
      if (rule !== 'any') ('allOf' in rule ? rule.allOf : rule.anyOf).forEach((s) => out.add(s));
    }
  }
  out.add('offline_access');
  return expandScopes(out);
})();
