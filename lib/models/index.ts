// Objection models of the workspace tables (CONVENTIONS.md habit 15). Workspace data is read and
// written through `Model.forWorkspace` or `Model.visibleTo` (lib/models/scoped.ts), never through
// a bare `query()`; the row types of these tables come from here.
export { type Reach, reachParams, reachShape, reachValues, WorkspaceScopedModel } from './scoped';
export { Workspace } from './Workspace';
export { Project, PROJECT_TYPES, type ProjectColumns, type ProjectType } from './Project';
export { Connection } from './Connection';
export { CLIENT_VIEW, Post, type PostColumns } from './Post';
export { PostStatus } from './PostStatus';
export { CalendarSlot, Note } from './Note';
export { Idea, type IdeaColumns } from './Idea';
export { Job } from './Job';
export { McpTask } from './McpTask';
export { Source } from './Source';
export { MediaAsset, type MediaAssetColumns } from './MediaAsset';
export { WorkspaceStorage, type WorkspaceStorageColumns } from './WorkspaceStorage';
export { Membership } from './Membership';
export { IdempotencyKey } from './IdempotencyKey';
export { WebhookEndpoint } from './WebhookEndpoint';
export { WebhookDelivery, type WebhookDeliveryColumns } from './WebhookDelivery';
export { Upload } from './Upload';
export { ApiKey } from './ApiKey';
export { KnowledgeChunk, KnowledgeDocument } from './Knowledge';
export { AiBudget, AiBudgetWeek, AiSpendDay } from './AiSpend';
export { PostMetricDay, PostMetricState, PostPublishHour } from './PostMetrics';
