import type { JobKind } from '../kind';
import { imageGeneration } from './imageGeneration';
import { knowledgeIngest } from './knowledgeIngest';
import { postGeneration } from './postGeneration';
import { sourceIngest } from './sourceIngest';

// Every job kind, by its type (docs/contributing.md "A job kind"): a new kind is a file beside
// these and one line here.

export const JOB_KINDS = {
  POST_GENERATION: postGeneration,
  IMAGE_GENERATION: imageGeneration,
  SOURCE_INGEST: sourceIngest,
  KNOWLEDGE_INGEST: knowledgeIngest,
} as const;

export type JobType = keyof typeof JOB_KINDS;
export const JOB_TYPES = Object.keys(JOB_KINDS) as JobType[];

/** The request a job of `T` keeps in its row's `input`, as its kind declares it. */
export type JobInput<T extends JobType> = (typeof JOB_KINDS)[T] extends JobKind<T, infer I> ? I : never;

/** Each kind filed under its own type (the assignment checks it). */
const KINDS: { readonly [T in JobType]: JobKind<T, object> } = JOB_KINDS;

/** The kind of a job of `type`: its workflow, its reservation, its start's texts. */
export function jobKindOf(type: JobType): JobKind<JobType, object> {
  return KINDS[type];
}
