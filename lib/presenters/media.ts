import { z } from 'zod';
import { isoOf, type WithIsoInstants } from '../db';
import type { AssetRow } from '../media/assets';
import { dateTime, objectComponent } from './output';

// spec 2.13 (docs/media.md): an asset of the media library.

export const mediaAssetSchema = objectComponent('MediaAsset', {
  id: z.string().describe('med_*'),
  key: z.string().describe('the key a post references in its images'),
  projectId: z.string().nullable(),
  mimeType: z.string(),
  bytes: z.number().int(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  sha256: z.string().describe('hex SHA-256 of the bytes; an import of the same bytes returns the existing asset'),
  alt: z.string().nullable(),
  title: z.string().nullable(),
  fileName: z.string().nullable(),
  createdAt: dateTime,
});

export type MediaAsset = z.infer<typeof mediaAssetSchema>;

export function presentAsset(a: WithIsoInstants<AssetRow>): MediaAsset {
  return {
    id: a.id,
    key: a.key,
    projectId: a.project_id,
    mimeType: a.mime_type,
    bytes: Number(a.bytes),
    width: a.width,
    height: a.height,
    sha256: a.sha256.trim(),
    alt: a.alt,
    title: a.title,
    fileName: a.file_name,
    createdAt: isoOf(a.created_at),
  };
}
