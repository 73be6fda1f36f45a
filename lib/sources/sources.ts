import type { ModelObject } from 'objection';
import { config } from '../config';
import { previewOf as cutPreview } from '../knowledge/text';
import { Source as SourceModel } from '../models';

// spec 2.11 Source (docs/sources.md "Fields"). The record the API returns is a preview of the
// text; `topics` and `hooks` appear once the status is `Success`.

export const SOURCE_STATUSES = ['Processing', 'Success', 'Failed'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];
export const SOURCE_TYPES = ['text', 'file'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** A `sources` row, as the model declares it. */
export type SourceRow = ModelObject<SourceModel>;

/** The job input of a SOURCE_INGEST job: which source to fill from which upload. */
export interface SourceIngestInput {
  sourceId: string;
  uploadId: string;
}

export function previewOf(text: string | null): { preview: string; previewTruncated: boolean } {
  return cutPreview(text ?? '', config.sources.previewChars);
}
