// Objection models of the core tables. Workspace data is read through `Model.forWorkspace` or
// `Model.visibleTo` (lib/models/scoped.ts), never through a bare `query()`.
export { type Reach, WorkspaceScopedModel } from './scoped';
export { Workspace } from './Workspace';
export { Project, PROJECT_TYPES, type ProjectColumns, type ProjectType } from './Project';
export { Connection } from './Connection';
export { Post } from './Post';
export { CalendarSlot, Note } from './Note';
export { Job } from './Job';
export { Source } from './Source';
export { WebhookEndpoint } from './WebhookEndpoint';
