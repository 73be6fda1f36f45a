import { WorkspaceScopedModel } from './scoped';

/** The columns of `media_assets` (spec 2.13). */
export interface MediaAssetColumns {
  id: string;
  workspace_id: string;
  project_id: string | null;
  key: string;
  sha256: string;
  mime_type: string;
  bytes: string | number;
  width: number;
  height: number;
  alt: string;
  title: string;
  file_name: string | null;
  upload_id: string | null;
  created_at: Date;
}

// Column properties come from the interface of the same name, as in ./Project.ts.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface MediaAsset extends MediaAssetColumns {}

/** A media-library asset (spec 2.13, 4.7); the API reads the library per workspace (`forWorkspace`). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class MediaAsset extends WorkspaceScopedModel {
  static tableName = 'media_assets';
}
