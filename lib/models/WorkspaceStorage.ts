import { WorkspaceScopedModel } from './scoped';

/** The columns of `workspace_storage`: what a workspace's media library holds, kept by a trigger on media_assets. */
export interface WorkspaceStorageColumns {
  workspace_id: string;
  used_bytes: string | number;
  used_assets: number;
}

// Column properties come from the interface of the same name, as in ./Project.ts.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface WorkspaceStorage extends WorkspaceStorageColumns {}

/** One row per workspace with media (migration 20261202100300); read by lib/media/assets.ts storageUsed. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class WorkspaceStorage extends WorkspaceScopedModel {
  static tableName = 'workspace_storage';
  static idColumn = 'workspace_id';
  static projectColumn = null;
}
