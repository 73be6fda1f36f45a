import { z } from 'zod';
import { isoOf, type WithIsoInstants } from '../db';
import type { IdeaRow } from '../ideas/ideas';
import { dateTime, objectComponent } from './output';

// spec 2.9: the idea, its status derived from the linked post (spec 3.3).

const clearable = z.string().nullable();

export const ideaSchema = objectComponent('Idea', {
  id: z.string().describe('idea_*'),
  projectId: z.string(),
  title: z.string(),
  content: z.string(),
  status: z.string().describe('Derived: inbox, in_production, review, done.'),
  pillar: clearable,
  postType: clearable,
  assetFormat: clearable,
  hook: clearable,
  topic: clearable,
  scheduledFor: z.string().nullable().describe('Date-level calendar placement.'),
  linkedPost: z.object({ id: z.string(), statusCategory: z.string() }).strict().nullable(),
  createdAt: dateTime,
  updatedAt: dateTime,
});

export type Idea = z.infer<typeof ideaSchema>;

export function presentIdea(r: WithIsoInstants<IdeaRow>): Idea {
  return {
    id: r.id,
    projectId: r.project_id,
    title: r.title,
    content: r.content,
    status: r.derived_status,
    pillar: r.pillar,
    postType: r.post_type,
    assetFormat: r.asset_format,
    hook: r.hook,
    topic: r.topic,
    scheduledFor: r.scheduled_for_text,
    linkedPost: r.linked_post_id && r.linked_category ? { id: r.linked_post_id, statusCategory: r.linked_category } : null,
    createdAt: isoOf(r.created_at),
    updatedAt: isoOf(r.updated_at),
  };
}
