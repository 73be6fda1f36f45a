import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TOOLS } from '../../api/mcp/tools/index';
import { createProject, issueApiKey } from '../../admin/provision';
import { config } from '../../lib/config';
import { storedDocument, workspaceWithKey } from '../support/factories';
import { png } from '../media/images';
import { connectedPersonalProject } from '../support/network';
import { callTool, connect, GENERATION_SOURCE, rest, startMcpStack, TRANSPORTS, type McpStack } from '../support/mcp';

// spec 1 rule 4 / 4.9: "Semantics are identical to REST." For every tool with a REST twin, the
// same operation and input give the same answer through both doors: the REST body equals the
// tool's structured content, and a REST error's code, message and details equal the tool
// error's. Writes are compared with their volatile parts (new ids, timestamps) masked.
//
// Differences the spec itself makes are not in the table: the scopes of the 4.9 table
// (projects:read, workspace:read, jobs:read, jobs:cancel, posts:generate where REST takes any
// token or posts:write), the default project and its invalid_request, list_workspaces'
// isActive field (the session's active workspace) and list_post_statuses' statusId (4.9), which
// the comparison drops.

interface Fixture {
  projectId: string;
  disconnectedPostId: string;
  noteId: string;
  postId: string;
  schedulePostId: string;
  jobId: string;
  otherProjectId: string;
  ideaId: string;
  mediaId: string;
  mediaBase64: string;
  sourceId: string;
  /** A small text file, base64: the same inline file through both doors is one source (spec 4.9). */
  sourceFileBase64: string;
  knowledgeId: string;
  /** Two drafts alike, one per door, for the review request (docs/review.md): it changes the post. */
  reviewRestPostId: string;
  reviewMcpPostId: string;
}

interface Row {
  tool: string;
  args: (f: Fixture) => Record<string, unknown>;
  /** The REST twin: method, path (query string included) and body. */
  rest: (f: Fixture) => [method: string, path: string, body?: unknown];
  /** Expected outcome, so that a row cannot pass by both doors failing the same wrong way. */
  expect: 'ok' | string;
  /** The answer creates something new each time: compare with ids and timestamps masked. */
  volatile?: boolean;
}

const far = new Date(Date.now() + 7 * 86_400_000).toISOString();
const q = (params: Record<string, string | number>) =>
  `?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;

const TABLE: Row[] = [
  { tool: 'get_workspace', args: () => ({}), rest: () => ['GET', '/v1/workspaces/me'], expect: 'ok' },
  { tool: 'list_workspaces', args: () => ({}), rest: () => ['GET', '/v1/workspaces'], expect: 'ok' },
  { tool: 'get_workspace_context', args: () => ({}), rest: () => ['GET', '/v1/workspaces/context'], expect: 'ok' },
  { tool: 'list_team', args: () => ({}), rest: () => ['GET', '/v1/team'], expect: 'ok' },
  { tool: 'get_usage', args: () => ({}), rest: () => ['GET', '/v1/usage'], expect: 'ok' },
  {
    tool: 'get_usage',
    args: () => ({ projectId: 'proj_missing' }),
    rest: () => ['GET', `/v1/usage${q({ projectId: 'proj_missing' })}`],
    expect: 'not_found',
  },

  { tool: 'list_projects', args: () => ({ limit: 1 }), rest: () => ['GET', `/v1/projects${q({ limit: 1 })}`], expect: 'ok' },
  { tool: 'list_projects', args: () => ({ limit: 0 }), rest: () => ['GET', `/v1/projects${q({ limit: 0 })}`], expect: 'bad_pagination' },
  {
    tool: 'list_projects',
    args: () => ({ cursor: 'forged' }),
    rest: () => ['GET', `/v1/projects${q({ cursor: 'forged' })}`],
    expect: 'bad_cursor',
  },
  {
    tool: 'list_projects',
    args: () => ({ type: 'BLOG' }),
    rest: () => ['GET', `/v1/projects${q({ type: 'BLOG' })}`],
    expect: 'invalid_request',
  },
  { tool: 'get_project', args: (f) => ({ projectId: f.projectId }), rest: (f) => ['GET', `/v1/projects/${f.projectId}`], expect: 'ok' },
  {
    tool: 'get_project',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['GET', `/v1/projects/${f.otherProjectId}`],
    expect: 'not_found',
  },

  {
    tool: 'list_notes',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['GET', `/v1/notes${q({ projectId: f.projectId })}`],
    expect: 'ok',
  },
  {
    tool: 'list_notes',
    args: (f) => ({ projectId: f.projectId, dateFrom: '2026-13-01' }),
    rest: (f) => ['GET', `/v1/notes${q({ projectId: f.projectId, dateFrom: '2026-13-01' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'list_notes',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['GET', `/v1/notes${q({ projectId: f.otherProjectId })}`],
    expect: 'not_found',
  },
  { tool: 'get_note', args: (f) => ({ noteId: f.noteId }), rest: (f) => ['GET', `/v1/notes/${f.noteId}`], expect: 'ok' },
  { tool: 'get_note', args: () => ({ noteId: 'note_missing' }), rest: () => ['GET', '/v1/notes/note_missing'], expect: 'not_found' },

  {
    tool: 'list_posts',
    args: (f) => ({ projectId: f.projectId, status: 'draft,scheduled' }),
    rest: (f) => ['GET', `/v1/posts${q({ projectId: f.projectId, status: 'draft,scheduled' })}`],
    expect: 'ok',
  },
  {
    tool: 'list_posts',
    args: (f) => ({ projectId: f.projectId, limit: 1 }),
    rest: (f) => ['GET', `/v1/posts${q({ projectId: f.projectId, limit: 1 })}`],
    expect: 'ok',
  },
  {
    tool: 'list_posts',
    args: (f) => ({ projectId: f.projectId, status: 'lost' }),
    rest: (f) => ['GET', `/v1/posts${q({ projectId: f.projectId, status: 'lost' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'list_posts',
    args: (f) => ({ projectId: f.projectId, limit: -2 }),
    rest: (f) => ['GET', `/v1/posts${q({ projectId: f.projectId, limit: -2 })}`],
    expect: 'bad_pagination',
  },
  {
    tool: 'list_posts',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['GET', `/v1/posts${q({ projectId: f.otherProjectId })}`],
    expect: 'not_found',
  },
  // spec 7.2, one rule in the pipeline (docs/mcp.md "Tools"): an unknown argument answers what
  // the REST twin answers for the same input, by its input source: a read (query string)
  // invalid_request, a write (body) unprocessable; a read tool's idempotencyKey is one such.
  {
    tool: 'list_posts',
    args: (f) => ({ projectId: f.projectId, colour: 'blue' }),
    rest: (f) => ['GET', `/v1/posts${q({ projectId: f.projectId, colour: 'blue' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'get_post',
    args: (f) => ({ postId: f.postId, idempotencyKey: 'k1' }),
    rest: (f) => ['GET', `/v1/posts/${f.postId}${q({ idempotencyKey: 'k1' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'update_post',
    args: (f) => ({ postId: f.postId, colour: 'blue' }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}`, { colour: 'blue' }],
    expect: 'unprocessable',
  },
  { tool: 'get_post', args: (f) => ({ postId: f.postId }), rest: (f) => ['GET', `/v1/posts/${f.postId}`], expect: 'ok' },
  { tool: 'get_post', args: () => ({ postId: 'post_missing' }), rest: () => ['GET', '/v1/posts/post_missing'], expect: 'not_found' },
  { tool: 'list_post_statuses', args: () => ({}), rest: () => ['GET', '/v1/post-statuses'], expect: 'ok' },

  {
    tool: 'list_jobs',
    args: () => ({ status: 'QUEUED,CANCELLED' }),
    rest: () => ['GET', `/v1/jobs${q({ status: 'QUEUED,CANCELLED' })}`],
    expect: 'ok',
  },
  {
    tool: 'list_jobs',
    args: () => ({ status: 'LOST' }),
    rest: () => ['GET', `/v1/jobs${q({ status: 'LOST' })}`],
    expect: 'invalid_request',
  },
  { tool: 'get_job', args: (f) => ({ jobId: f.jobId }), rest: (f) => ['GET', `/v1/jobs/${f.jobId}`], expect: 'ok' },
  { tool: 'get_job', args: () => ({ jobId: 'job_missing' }), rest: () => ['GET', '/v1/jobs/job_missing'], expect: 'not_found' },

  {
    tool: 'create_note',
    args: (f) => ({ projectId: f.projectId, content: 'Parity note', slotDate: far }),
    rest: (f) => ['POST', '/v1/notes', { projectId: f.projectId, content: 'Parity note', slotDate: far }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_note',
    args: (f) => ({ projectId: f.projectId, content: ' ' }),
    rest: (f) => ['POST', '/v1/notes', { projectId: f.projectId, content: ' ' }],
    expect: 'unprocessable',
  },
  {
    tool: 'create_note',
    args: (f) => ({ projectId: f.projectId, content: 'x'.repeat(100_001) }),
    rest: (f) => ['POST', '/v1/notes', { projectId: f.projectId, content: 'x'.repeat(100_001) }],
    expect: 'payload_too_large',
  },
  {
    tool: 'create_note',
    args: (f) => ({ projectId: f.otherProjectId, content: 'x' }),
    rest: (f) => ['POST', '/v1/notes', { projectId: f.otherProjectId, content: 'x' }],
    expect: 'not_found',
  },

  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.projectId, content: 'Parity\nsecond line', contentType: 'EDUCATIONAL' }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId, content: 'Parity\nsecond line', contentType: 'EDUCATIONAL' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.projectId, content: 'Later', scheduledFor: far }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId, content: 'Later', scheduledFor: far }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.projectId, scheduledFor: '2020-01-01T00:00:00Z' }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId, scheduledFor: '2020-01-01T00:00:00Z' }],
    expect: 'unprocessable',
  },
  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.projectId, contentType: 'LOUD' }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId, contentType: 'LOUD' }],
    expect: 'unprocessable',
  },
  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.projectId, title: 't'.repeat(501) }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId, title: 't'.repeat(501) }],
    expect: 'payload_too_large',
  },
  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.projectId, tone: 'witty' }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId, tone: 'witty' }],
    expect: 'unprocessable',
  },
  {
    tool: 'create_post_draft',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['POST', '/v1/posts', { projectId: f.otherProjectId }],
    expect: 'not_found',
  },

  {
    tool: 'update_post',
    args: (f) => ({ postId: f.postId, content: 'Edited the same way', autoLike: true }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}`, { content: 'Edited the same way', autoLike: true }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'update_post',
    args: (f) => ({ postId: f.postId, statusCategory: 'draft', statusId: 'pst_x' }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}`, { statusCategory: 'draft', statusId: 'pst_x' }],
    expect: 'unprocessable',
  },
  {
    tool: 'update_post',
    args: (f) => ({ postId: f.postId, scheduledFor: '2026-12-01' }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}`, { scheduledFor: '2026-12-01' }],
    expect: 'unprocessable',
  },
  {
    tool: 'update_post',
    args: () => ({ postId: 'post_missing', content: 'x' }),
    rest: () => ['PATCH', '/v1/posts/post_missing', { content: 'x' }],
    expect: 'not_found',
  },

  {
    tool: 'schedule_post',
    args: (f) => ({ postId: f.schedulePostId, scheduledFor: far }),
    rest: (f) => ['PATCH', `/v1/posts/${f.schedulePostId}`, { scheduledFor: far }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'schedule_post',
    args: (f) => ({ postId: f.disconnectedPostId, scheduledFor: far }),
    rest: (f) => ['PATCH', `/v1/posts/${f.disconnectedPostId}`, { scheduledFor: far }],
    expect: 'conflict',
  },
  {
    tool: 'schedule_post',
    args: (f) => ({ postId: f.schedulePostId, scheduledFor: '2020-01-01T00:00:00Z' }),
    rest: (f) => ['PATCH', `/v1/posts/${f.schedulePostId}`, { scheduledFor: '2020-01-01T00:00:00Z' }],
    expect: 'unprocessable',
  },
  {
    tool: 'schedule_post',
    args: () => ({ postId: 'post_missing', scheduledFor: far }),
    rest: () => ['PATCH', '/v1/posts/post_missing', { scheduledFor: far }],
    expect: 'not_found',
  },

  {
    tool: 'generate_post',
    args: (f) => ({ projectId: f.projectId, source: GENERATION_SOURCE }),
    rest: (f) => ['POST', '/v1/posts/generations', { projectId: f.projectId, source: GENERATION_SOURCE }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'generate_post',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['POST', '/v1/posts/generations', { projectId: f.projectId }],
    expect: 'invalid_request',
  },
  {
    tool: 'generate_post',
    args: (f) => ({ projectId: f.projectId, source: { type: 'text', text: 'x'.repeat(100_001) } }),
    rest: (f) => ['POST', '/v1/posts/generations', { projectId: f.projectId, source: { type: 'text', text: 'x'.repeat(100_001) } }],
    expect: 'payload_too_large',
  },
  {
    tool: 'generate_post',
    args: (f) => ({ projectId: f.projectId, source: { type: 'note', noteId: 'note_elsewhere' } }),
    rest: (f) => ['POST', '/v1/posts/generations', { projectId: f.projectId, source: { type: 'note', noteId: 'note_elsewhere' } }],
    expect: 'unprocessable',
  },

  {
    tool: 'create_upload_url',
    args: () => ({ fileName: 'a.png', contentType: 'image/png', bytes: 100, purpose: 'media' }),
    rest: () => ['POST', '/v1/uploads', { fileName: 'a.png', contentType: 'image/png', bytes: 100, purpose: 'media' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_upload_url',
    args: () => ({ fileName: 'a.png', contentType: 'image/png', bytes: 1e12, purpose: 'media' }),
    rest: () => ['POST', '/v1/uploads', { fileName: 'a.png', contentType: 'image/png', bytes: 1e12, purpose: 'media' }],
    expect: 'payload_too_large',
  },
  {
    tool: 'import_media',
    args: (f) => ({ projectId: f.projectId, content_base64: f.mediaBase64, alt: 'parity' }),
    rest: (f) => ['POST', '/v1/media', { projectId: f.projectId, content_base64: f.mediaBase64, alt: 'parity' }],
    expect: 'ok',
  },
  {
    tool: 'import_media',
    args: (f) => ({ projectId: f.projectId, content_base64: f.mediaBase64, sha256: '0'.repeat(64) }),
    rest: (f) => ['POST', '/v1/media', { projectId: f.projectId, content_base64: f.mediaBase64, sha256: '0'.repeat(64) }],
    expect: 'unprocessable',
  },
  {
    tool: 'import_media',
    args: (f) => ({ projectId: f.projectId, uploadId: 'upl_missing' }),
    rest: (f) => ['POST', '/v1/media', { projectId: f.projectId, uploadId: 'upl_missing' }],
    expect: 'unprocessable',
  },
  { tool: 'list_media', args: () => ({ limit: 1 }), rest: () => ['GET', `/v1/media${q({ limit: 1 })}`], expect: 'ok' },
  { tool: 'list_media', args: () => ({ limit: 0 }), rest: () => ['GET', `/v1/media${q({ limit: 0 })}`], expect: 'bad_pagination' },
  { tool: 'get_media', args: (f) => ({ mediaId: f.mediaId }), rest: (f) => ['GET', `/v1/media/${f.mediaId}`], expect: 'ok' },
  { tool: 'get_media', args: () => ({ mediaId: 'med_missing' }), rest: () => ['GET', '/v1/media/med_missing'], expect: 'not_found' },
  {
    tool: 'set_post_media',
    args: (f) => ({ postId: f.postId, images: [] }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}/media`, { images: [] }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'set_post_media',
    args: (f) => ({ postId: f.postId, images: [{ key: 'org_x/media/none.png' }] }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}/media`, { images: [{ key: 'org_x/media/none.png' }] }],
    expect: 'not_found',
  },

  {
    tool: 'generate_image',
    args: (f) => ({ projectId: f.projectId, prompt: 'Parity card' }),
    rest: (f) => ['POST', '/v1/media/generations', { projectId: f.projectId, prompt: 'Parity card' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'generate_image',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['POST', '/v1/media/generations', { projectId: f.projectId }],
    expect: 'unprocessable',
  },

  // Sources (spec 2.11, 4.5, 4.9; docs/sources.md).
  { tool: 'get_source', args: (f) => ({ sourceId: f.sourceId }), rest: (f) => ['GET', `/v1/sources/${f.sourceId}`], expect: 'ok' },
  { tool: 'get_source', args: () => ({ sourceId: 'src_missing' }), rest: () => ['GET', '/v1/sources/src_missing'], expect: 'not_found' },
  {
    tool: 'create_source_text',
    args: (f) => ({ projectId: f.projectId, type: 'text', text: 'Parity text source about planning and planning well.' }),
    rest: (f) => [
      'POST',
      '/v1/sources',
      { projectId: f.projectId, type: 'text', text: 'Parity text source about planning and planning well.' },
    ],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_source_text',
    args: (f) => ({ projectId: f.projectId, type: 'text' }),
    rest: (f) => ['POST', '/v1/sources', { projectId: f.projectId, type: 'text' }],
    expect: 'invalid_request',
  },
  {
    tool: 'create_source_file',
    args: (f) => ({ projectId: f.projectId, type: 'file', content_base64: f.sourceFileBase64, mimeType: 'text/plain', filename: 'p.txt' }),
    rest: (f) => [
      'POST',
      '/v1/sources',
      { projectId: f.projectId, type: 'file', content_base64: f.sourceFileBase64, mimeType: 'text/plain', filename: 'p.txt' },
    ],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_source_file',
    args: (f) => ({ projectId: f.projectId, type: 'file', content_base64: 'not base64!', mimeType: 'text/plain', filename: 'p.txt' }),
    rest: (f) => [
      'POST',
      '/v1/sources',
      { projectId: f.projectId, type: 'file', content_base64: 'not base64!', mimeType: 'text/plain', filename: 'p.txt' },
    ],
    expect: 'invalid_request',
  },
  {
    tool: 'create_source_file',
    args: (f) => ({ projectId: f.projectId, type: 'file', uploadId: 'upl_missing' }),
    rest: (f) => ['POST', '/v1/sources', { projectId: f.projectId, type: 'file', uploadId: 'upl_missing' }],
    expect: 'unprocessable',
  },
  // Knowledge base (docs/knowledge.md).
  {
    tool: 'add_to_knowledge_base',
    args: (f) => ({ type: 'text', projectId: f.projectId, text: 'Parity knowledge about otters.' }),
    rest: (f) => ['POST', '/v1/knowledge', { type: 'text', projectId: f.projectId, text: 'Parity knowledge about otters.' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'add_to_knowledge_base',
    args: (f) => ({ type: 'url', projectId: f.projectId, url: 'ftp://example.com/x' }),
    rest: (f) => ['POST', '/v1/knowledge', { type: 'url', projectId: f.projectId, url: 'ftp://example.com/x' }],
    expect: 'unprocessable',
  },
  {
    tool: 'add_to_knowledge_base',
    args: (f) => ({ type: 'text', projectId: f.projectId, text: 'x'.repeat(100_001) }),
    rest: (f) => ['POST', '/v1/knowledge', { type: 'text', projectId: f.projectId, text: 'x'.repeat(100_001) }],
    expect: 'payload_too_large',
  },
  {
    tool: 'get_knowledge_document',
    args: (f) => ({ documentId: f.knowledgeId }),
    rest: (f) => ['GET', `/v1/knowledge/${f.knowledgeId}`],
    expect: 'ok',
  },
  {
    tool: 'get_knowledge_document',
    args: () => ({ documentId: 'kb_missing' }),
    rest: () => ['GET', '/v1/knowledge/kb_missing'],
    expect: 'not_found',
  },
  {
    tool: 'search_knowledge_base',
    args: () => ({ query: 'otters' }),
    rest: () => ['GET', `/v1/knowledge${q({ query: 'otters' })}`],
    expect: 'ok',
  },
  {
    tool: 'search_knowledge_base',
    args: () => ({ limit: 0 }),
    rest: () => ['GET', `/v1/knowledge${q({ limit: 0 })}`],
    expect: 'bad_pagination',
  },

  { tool: 'cancel_job', args: (f) => ({ jobId: f.jobId }), rest: (f) => ['POST', `/v1/jobs/${f.jobId}/cancel`], expect: 'ok' },
  { tool: 'cancel_job', args: () => ({ jobId: 'job_missing' }), rest: () => ['POST', '/v1/jobs/job_missing/cancel'], expect: 'not_found' },

  // Planning: the idea board (spec 4.6 and its 9.3 additions).
  {
    tool: 'list_ideas',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['GET', `/v1/ideas${q({ projectId: f.projectId })}`],
    expect: 'ok',
  },
  {
    tool: 'list_ideas',
    args: (f) => ({ projectId: f.projectId, status: 'inbox,done' }),
    rest: (f) => ['GET', `/v1/ideas${q({ projectId: f.projectId, status: 'inbox,done' })}`],
    expect: 'ok',
  },
  {
    tool: 'list_ideas',
    args: (f) => ({ projectId: f.projectId, status: 'archived' }),
    rest: (f) => ['GET', `/v1/ideas${q({ projectId: f.projectId, status: 'archived' })}`],
    expect: 'invalid_request',
  },
  { tool: 'list_ideas', args: () => ({}), rest: () => ['GET', '/v1/ideas'], expect: 'invalid_request' },
  {
    tool: 'list_ideas',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['GET', `/v1/ideas${q({ projectId: f.otherProjectId })}`],
    expect: 'not_found',
  },
  { tool: 'get_idea', args: (f) => ({ ideaId: f.ideaId }), rest: (f) => ['GET', `/v1/ideas/${f.ideaId}`], expect: 'ok' },
  { tool: 'get_idea', args: () => ({ ideaId: 'idea_missing' }), rest: () => ['GET', '/v1/ideas/idea_missing'], expect: 'not_found' },
  {
    tool: 'create_idea',
    args: (f) => ({ projectId: f.projectId, title: 'Parity idea', pillar: 'Education', scheduledFor: '2031-01-02' }),
    rest: (f) => ['POST', '/v1/ideas', { projectId: f.projectId, title: 'Parity idea', pillar: 'Education', scheduledFor: '2031-01-02' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'create_idea',
    args: (f) => ({ projectId: f.projectId, title: 'x', status: 'done' }),
    rest: (f) => ['POST', '/v1/ideas', { projectId: f.projectId, title: 'x', status: 'done' }],
    expect: 'unprocessable',
  },
  {
    tool: 'update_idea',
    args: (f) => ({ ideaId: f.ideaId, projectId: f.projectId, hook: null, topic: 'Parity topic' }),
    rest: (f) => ['PATCH', `/v1/ideas/${f.ideaId}`, { projectId: f.projectId, hook: null, topic: 'Parity topic' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'update_idea',
    args: (f) => ({ ideaId: f.ideaId, projectId: f.projectId }),
    rest: (f) => ['PATCH', `/v1/ideas/${f.ideaId}`, { projectId: f.projectId }],
    expect: 'unprocessable',
  },
  {
    tool: 'update_idea',
    args: (f) => ({ ideaId: f.ideaId, projectId: f.projectId, status: 'review' }),
    rest: (f) => ['PATCH', `/v1/ideas/${f.ideaId}`, { projectId: f.projectId, status: 'review' }],
    expect: 'unprocessable',
  },
  {
    tool: 'generate_post',
    args: (f) => ({ projectId: f.projectId, source: { type: 'idea', ideaId: f.ideaId } }),
    rest: (f) => ['POST', '/v1/posts/generations', { projectId: f.projectId, source: { type: 'idea', ideaId: f.ideaId } }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'generate_post',
    args: (f) => ({ projectId: f.projectId, source: { type: 'idea', ideaId: 'idea_elsewhere' } }),
    rest: (f) => ['POST', '/v1/posts/generations', { projectId: f.projectId, source: { type: 'idea', ideaId: 'idea_elsewhere' } }],
    expect: 'unprocessable',
  },
  {
    tool: 'list_calendar',
    args: (f) => ({ projectId: f.projectId, from: far.slice(0, 10), to: far.slice(0, 10) }),
    rest: (f) => ['GET', `/v1/calendar${q({ projectId: f.projectId, from: far.slice(0, 10), to: far.slice(0, 10) })}`],
    expect: 'ok',
  },
  {
    tool: 'list_calendar',
    args: () => ({ from: '2031-01-01', to: '2031-01-31' }),
    rest: () => ['GET', `/v1/calendar${q({ from: '2031-01-01', to: '2031-01-31' })}`],
    expect: 'ok',
  },
  {
    tool: 'list_calendar',
    args: (f) => ({ projectId: f.projectId, from: '2031-01-01', to: '2031-06-01' }),
    rest: (f) => ['GET', `/v1/calendar${q({ projectId: f.projectId, from: '2031-01-01', to: '2031-06-01' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'list_calendar',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['GET', `/v1/calendar${q({ projectId: f.otherProjectId })}`],
    expect: 'not_found',
  },
  { tool: 'list_company_pages', args: () => ({ limit: 5 }), rest: () => ['GET', `/v1/company-pages${q({ limit: 5 })}`], expect: 'ok' },
  {
    tool: 'list_company_pages',
    args: () => ({ cursor: 'forged' }),
    rest: () => ['GET', `/v1/company-pages${q({ cursor: 'forged' })}`],
    expect: 'bad_cursor',
  },
  {
    tool: 'get_analytics_overview',
    args: (f) => ({ projectId: f.projectId, from: '2031-01-01', to: '2031-01-31' }),
    rest: (f) => ['GET', `/v1/analytics/overview${q({ projectId: f.projectId, from: '2031-01-01', to: '2031-01-31' })}`],
    expect: 'ok',
  },
  {
    tool: 'get_analytics_overview',
    args: (f) => ({ projectId: f.projectId, from: '2029-01-01', to: '2031-01-31' }),
    rest: (f) => ['GET', `/v1/analytics/overview${q({ projectId: f.projectId, from: '2029-01-01', to: '2031-01-31' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'get_analytics_overview',
    args: (f) => ({ projectId: f.otherProjectId }),
    rest: (f) => ['GET', `/v1/analytics/overview${q({ projectId: f.otherProjectId })}`],
    expect: 'not_found',
  },
  {
    tool: 'list_post_analytics',
    args: (f) => ({ projectId: f.projectId, sort: 'engagementRate' }),
    rest: (f) => ['GET', `/v1/analytics/posts${q({ projectId: f.projectId, sort: 'engagementRate' })}`],
    expect: 'ok',
  },
  {
    tool: 'list_post_analytics',
    args: (f) => ({ projectId: f.projectId, sort: 'loudness' }),
    rest: (f) => ['GET', `/v1/analytics/posts${q({ projectId: f.projectId, sort: 'loudness' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'list_post_analytics',
    args: (f) => ({ projectId: f.projectId, cursor: 'forged' }),
    rest: (f) => ['GET', `/v1/analytics/posts${q({ projectId: f.projectId, cursor: 'forged' })}`],
    expect: 'bad_cursor',
  },
  {
    tool: 'search_viral_posts',
    args: () => ({ query: 'hiring', limit: 5 }),
    rest: () => ['GET', `/v1/viral-posts${q({ query: 'hiring', limit: 5 })}`],
    expect: 'ok',
  },
  {
    tool: 'search_viral_posts',
    args: () => ({ query: '' }),
    rest: () => ['GET', `/v1/viral-posts${q({ query: '' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'get_cross_workspace_analytics',
    args: () => ({ from: '2031-01-01', to: '2031-01-31' }),
    rest: () => ['GET', `/v1/analytics/cross-workspace/overview${q({ from: '2031-01-01', to: '2031-01-31' })}`],
    expect: 'ok',
  },
  {
    tool: 'get_cross_workspace_analytics',
    args: () => ({ from: '2031-13-01' }),
    rest: () => ['GET', `/v1/analytics/cross-workspace/overview${q({ from: '2031-13-01' })}`],
    expect: 'invalid_request',
  },
  {
    tool: 'update_idea',
    args: (f) => ({ ideaId: f.ideaId, title: 'x' }),
    rest: (f) => ['PATCH', `/v1/ideas/${f.ideaId}`, { title: 'x' }],
    expect: 'invalid_request',
  },

  // Review before publishing (docs/review.md). A decision needs a person (an OAuth reviewer): its
  // happy path through both doors is test/review/mcp.test.ts; here an API key is refused alike.
  {
    tool: 'request_post_review',
    args: (f) => ({ postId: f.reviewMcpPostId, notes: 'Please check' }),
    rest: (f) => ['POST', `/v1/posts/${f.reviewRestPostId}/review`, { notes: 'Please check' }],
    expect: 'ok',
    volatile: true,
  },
  {
    tool: 'request_post_review',
    args: (f) => ({ postId: f.postId, reviewerUserId: 'user_nobody' }),
    rest: (f) => ['POST', `/v1/posts/${f.postId}/review`, { reviewerUserId: 'user_nobody' }],
    expect: 'unprocessable',
  },
  {
    tool: 'request_post_review',
    args: () => ({ postId: 'post_missing' }),
    rest: () => ['POST', '/v1/posts/post_missing/review', {}],
    expect: 'not_found',
  },
  {
    tool: 'approve_post',
    args: (f) => ({ postId: f.postId }),
    rest: (f) => ['POST', `/v1/posts/${f.postId}/review/approve`, {}],
    expect: 'conflict',
  },
  {
    tool: 'approve_post',
    args: () => ({ postId: 'post_missing' }),
    rest: () => ['POST', '/v1/posts/post_missing/review/approve', {}],
    expect: 'not_found',
  },
  {
    tool: 'reject_post',
    args: (f) => ({ postId: f.postId, notes: 'no' }),
    rest: (f) => ['POST', `/v1/posts/${f.postId}/review/reject`, { notes: 'no' }],
    expect: 'conflict',
  },
  {
    tool: 'reject_post',
    args: (f) => ({ postId: f.reviewRestPostId }),
    rest: (f) => ['POST', `/v1/posts/${f.reviewRestPostId}/review/reject`, {}],
    expect: 'forbidden_project',
  },
  {
    tool: 'list_posts_awaiting_review',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['GET', `/v1/reviews/awaiting${q({ projectId: f.projectId })}`],
    expect: 'ok',
  },
  {
    tool: 'list_posts_awaiting_review',
    args: () => ({ projectId: '' }),
    rest: () => ['GET', `/v1/reviews/awaiting${q({ projectId: '' })}`],
    expect: 'invalid_request',
  },
];

/** Tools whose success needs a person (an OAuth reviewer), proved in test/review/mcp.test.ts. */
const DECIDED_BY_A_PERSON = new Set(['approve_post', 'reject_post']);

/** No REST twin exists for these (spec 4.4: no REST delete; the session is the agent transport's). */
const MCP_ONLY = new Set(['switch_workspace', 'delete_post']);

/** Same answers for the same credential and input; the key lacks a scope both doors require. */
const SCOPE_TABLE: Array<{ tool: string; args: (f: Fixture) => Record<string, unknown>; rest: Row['rest'] }> = [
  { tool: 'create_post_draft', args: (f) => ({ projectId: f.projectId }), rest: (f) => ['POST', '/v1/posts', { projectId: f.projectId }] },
  {
    tool: 'update_post',
    args: (f) => ({ postId: f.postId, content: 'x' }),
    rest: (f) => ['PATCH', `/v1/posts/${f.postId}`, { content: 'x' }],
  },
  {
    tool: 'create_note',
    args: (f) => ({ projectId: f.projectId, content: 'x' }),
    rest: (f) => ['POST', '/v1/notes', { projectId: f.projectId, content: 'x' }],
  },
  { tool: 'list_posts', args: (f) => ({ projectId: f.projectId }), rest: (f) => ['GET', `/v1/posts${q({ projectId: f.projectId })}`] },
  { tool: 'get_note', args: (f) => ({ noteId: f.noteId }), rest: (f) => ['GET', `/v1/notes/${f.noteId}`] },
  { tool: 'list_ideas', args: (f) => ({ projectId: f.projectId }), rest: (f) => ['GET', `/v1/ideas${q({ projectId: f.projectId })}`] },
  {
    tool: 'list_calendar',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['GET', `/v1/calendar${q({ projectId: f.projectId })}`],
  },
  {
    tool: 'get_analytics_overview',
    args: (f) => ({ projectId: f.projectId }),
    rest: (f) => ['GET', `/v1/analytics/overview${q({ projectId: f.projectId })}`],
  },
  { tool: 'search_viral_posts', args: () => ({ query: 'ai' }), rest: () => ['GET', `/v1/viral-posts${q({ query: 'ai' })}`] },
  {
    tool: 'update_idea',
    args: (f) => ({ ideaId: f.ideaId, projectId: f.projectId, title: 'x' }),
    rest: (f) => ['PATCH', `/v1/ideas/${f.ideaId}`, { projectId: f.projectId, title: 'x' }],
  },
];

const VOLATILE_ID = /^(post|note|job|slot|pst|req|evt|idea|upl|src)_[A-Za-z0-9]+$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function mask(v: unknown, keep: Set<string>): unknown {
  if (typeof v === 'string') {
    if (/[?&]X-Amz-Signature=/.test(v)) return '<presigned url>';
    if (VOLATILE_ID.test(v) && !keep.has(v)) return `<${v.split('_')[0]}>`;
    if (TIMESTAMP.test(v) && v !== far) return '<timestamp>';
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => mask(x, keep));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mask(x, keep)]));
  return v;
}

/** spec 4.9: list_post_statuses "gives statusId": the tool adds it beside `id`, equal to it. */
function dropStatusId(body: any) {
  return {
    ...body,
    data: body.data.map(({ statusId, ...s }: any) => {
      assert.equal(statusId, s.id);
      return s;
    }),
  };
}

function dropIsActive(body: any) {
  return Array.isArray(body?.data) ? { ...body, data: body.data.map(({ isActive: _active, ...w }: any) => w) } : body;
}

describe('REST and MCP parity', function () {
  this.timeout(120_000);
  let stack: McpStack;
  const limits = { ...config.rateLimit };
  before(async () => {
    stack = await startMcpStack();
    // Two doors × a long table in one workspace: the budget is not what is under test here.
    Object.assign(config.rateLimit, { readPerWindow: 10_000, writePerWindow: 10_000 });
  });
  after(async () => {
    Object.assign(config.rateLimit, limits);
    await stack.close();
  });

  it('covers every tool of the catalogue', () => {
    const covered = new Set([...TABLE.map((r) => r.tool), ...MCP_ONLY]);
    assert.deepEqual(
      TOOLS.map((t) => t.name).filter((n) => !covered.has(n)),
      [],
    );
    for (const name of TOOLS.map((t) => t.name).filter((n) => !MCP_ONLY.has(n))) {
      assert.ok(TABLE.some((r) => r.tool === name && r.expect === 'ok') || DECIDED_BY_A_PERSON.has(name), `${name} has a happy row`);
      assert.ok(
        TABLE.some((r) => r.tool === name && r.expect !== 'ok') ||
          name === 'get_workspace' ||
          name === 'list_workspaces' ||
          name === 'list_post_statuses' ||
          // Argument-less reads like the three above: no input can make them fail.
          name === 'get_workspace_context' ||
          name === 'list_team',
        `${name} has an error row`,
      );
    }
  });

  for (const kind of TRANSPORTS) {
    describe(`over ${kind}`, () => {
      let f: Fixture;
      let client: Client;
      let call: ReturnType<typeof rest>;
      let narrowClient: Client;
      let narrowCall: ReturnType<typeof rest>;

      before(async () => {
        const ws = await workspaceWithKey({ scopes: ['read', 'write'], projects: 2 });
        const other = await workspaceWithKey();
        call = rest(stack.apiUrl, ws.key);
        client = await connect(kind, stack.mcpUrl, ws.key);
        const { project: connected } = await connectedPersonalProject(ws.workspace.id);
        const note = await call('POST', '/v1/notes', { projectId: ws.project.id, content: 'Seed note' });
        const post = await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'Seed post' });
        const toSchedule = await call('POST', '/v1/posts', { projectId: connected.id, content: 'To schedule' });
        const job = await call('POST', '/v1/posts/generations', { projectId: ws.project.id, source: GENERATION_SOURCE });
        // A post in this workspace whose project cannot publish: schedule_post answers conflict.
        const unlinked = await createProject({
          workspaceId: ws.workspace.id,
          type: 'PERSONAL_BRAND',
          name: 'Unlinked',
          connection: 'none',
        });
        const stuck = await call('POST', '/v1/posts', { projectId: unlinked.id, content: 'Cannot publish' });
        const idea = await call('POST', '/v1/ideas', { projectId: ws.project.id, title: 'Seed idea', hook: 'A hook' });
        const mediaBase64 = png(12, 9).toString('base64');
        const asset = await call('POST', '/v1/media', { projectId: ws.project.id, content_base64: png(9, 12).toString('base64') });
        const source = await call('POST', '/v1/sources', { projectId: ws.project.id, type: 'text', text: 'Seed source on hiring.' });
        const reviewRest = await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'For review' });
        const reviewMcp = await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'For review' });
        // A stored knowledge document (its ingest job is covered in test/knowledge).
        const kb = await storedDocument(
          { workspaceId: ws.workspace.id, projectId: ws.project.id },
          { text: 'Parity knowledge: otters hold hands while they sleep.', name: 'Otters', tags: ['parity'] },
        );
        f = {
          projectId: ws.project.id,
          noteId: note.body.data.id,
          postId: post.body.data.id,
          schedulePostId: toSchedule.body.data.id,
          jobId: job.body.data.id,
          otherProjectId: other.project.id,
          disconnectedPostId: stuck.body.data.id,
          ideaId: idea.body.data.id,
          mediaId: asset.body.data.id,
          mediaBase64,
          sourceId: source.body.data.id,
          sourceFileBase64: Buffer.from(`Parity file ${kind}: notes on shipping and shipping often.`).toString('base64'),
          reviewRestPostId: reviewRest.body.data.id,
          reviewMcpPostId: reviewMcp.body.data.id,
          knowledgeId: kb.documentId,
        };
        const narrowKey = (await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['workspace:read'] })).key;
        narrowCall = rest(stack.apiUrl, narrowKey);
        narrowClient = await connect(kind, stack.mcpUrl, narrowKey);
      });
      after(async () => {
        await client.close();
        await narrowClient.close();
      });

      for (const row of TABLE) {
        it(`${row.tool} ${JSON.stringify(row.args({ projectId: 'P', noteId: 'N', postId: 'T', schedulePostId: 'U', jobId: 'J', otherProjectId: 'O', disconnectedPostId: 'D', ideaId: 'I', mediaId: 'M', mediaBase64: 'B', sourceId: 'S', sourceFileBase64: 'F', reviewRestPostId: 'RR', reviewMcpPostId: 'RM', knowledgeId: 'K' })).slice(0, 90)} → ${row.expect}`, async () => {
          const [method, path, body] = row.rest(f);
          const viaRest = await call(method, path, body);
          const viaMcp = await callTool(client, row.tool, row.args(f));
          if (row.expect === 'ok') {
            assert.equal(viaRest.status, 200, JSON.stringify(viaRest.body));
            assert.notEqual(viaMcp.isError, true, JSON.stringify(viaMcp.structuredContent));
            // The per-door review posts differ by design: masked like new ids.
            const keep = new Set(
              Object.entries(f)
                .filter(([k]) => k !== 'reviewRestPostId' && k !== 'reviewMcpPostId')
                .map(([, v]) => v),
            );
            const a = row.volatile ? mask(viaRest.body, keep) : viaRest.body;
            const b = row.volatile ? mask(viaMcp.structuredContent, keep) : viaMcp.structuredContent;
            assert.deepEqual(row.tool === 'list_workspaces' ? dropIsActive(b) : row.tool === 'list_post_statuses' ? dropStatusId(b) : b, a);
          } else {
            assert.equal(viaRest.body?.error?.code, row.expect, JSON.stringify(viaRest.body));
            assert.equal(viaMcp.isError, true, JSON.stringify(viaMcp.structuredContent));
            const e = viaMcp.structuredContent as any;
            assert.equal(e.code, viaRest.body.error.code);
            assert.equal(e.message, viaRest.body.error.message);
            assert.deepEqual(e.details, viaRest.body.error.details);
            assert.equal(e.documentationUrl, viaRest.body.error.docs_url);
          }
        });
      }

      for (const row of SCOPE_TABLE) {
        it(`${row.tool} without its scope → scope_missing through both doors`, async () => {
          const [method, path, body] = row.rest(f);
          const viaRest = await narrowCall(method, path, body);
          const viaMcp = await callTool(narrowClient, row.tool, row.args(f));
          assert.equal(viaRest.status, 403);
          assert.equal(viaMcp.isError, true);
          const e = viaMcp.structuredContent as any;
          assert.equal(e.code, 'scope_missing');
          assert.equal(e.code, viaRest.body.error.code);
          assert.deepEqual(e.details, viaRest.body.error.details);
        });
      }
    });
  }
});
