import { db } from '../lib/db';
import { presentIdea } from '../lib/presenters/ideas';
import { ideaQuery, insertIdea, WRITABLE_IDEA_STATUSES, type IdeaRow, type NewIdea } from '../lib/ideas/ideas';

// Operator-side idea writes (bin/admin `idea create`, `seed ideas`): the same rows and the
// same presented shape as POST /v1/ideas, without a credential.

export type OperatorIdeaInput = Omit<NewIdea, 'workspaceId' | 'linkedPostId' | 'status'> & { status?: string };

async function projectOf(projectId: string): Promise<{ id: string; workspace_id: string }> {
  const project = await db()('projects').where({ id: projectId }).first('id', 'workspace_id');
  if (!project) throw new Error(`no project ${projectId}`);
  return project;
}

export async function createIdeaAsOperator(input: OperatorIdeaInput) {
  const project = await projectOf(input.projectId);
  if (!input.title.trim()) throw new Error('the title must not be empty');
  const status = input.status ?? 'inbox';
  if (!(WRITABLE_IDEA_STATUSES as readonly string[]).includes(status))
    throw new Error(`status must be one of ${WRITABLE_IDEA_STATUSES.join(', ')} (review and done follow the linked post)`);
  if (input.scheduledFor && !/^\d{4}-\d{2}-\d{2}$/.test(input.scheduledFor))
    throw new Error('scheduled-for must be a date in YYYY-MM-DD form');
  const id = await insertIdea({ ...input, workspaceId: project.workspace_id, projectId: project.id, status });
  return presentIdea((await ideaQuery({ workspaceId: project.workspace_id, projectIds: null }).findById(id).castTo<IdeaRow>())!);
}

const SEED_BRIEFS: ReadonlyArray<Omit<OperatorIdeaInput, 'projectId' | 'scheduledFor'>> = [
  {
    title: 'Three things our first hire taught us',
    pillar: 'Culture',
    postType: 'story',
    assetFormat: 'text',
    hook: 'We almost did not hire her.',
    topic: 'hiring',
  },
  {
    title: 'How we cut deploy time in half',
    pillar: 'Education',
    postType: 'how-to',
    assetFormat: 'carousel',
    hook: 'Our pipeline took 40 minutes. Now 18.',
    topic: 'engineering',
  },
  {
    title: 'Customer story: a migration in a weekend',
    pillar: 'Product',
    postType: 'case study',
    assetFormat: 'image',
    hook: 'Friday 6 pm, 2 TB to move.',
    topic: 'customers',
  },
  {
    title: 'Why I stopped writing to-do lists',
    pillar: 'Personal story',
    postType: 'opinion',
    assetFormat: 'text',
    hook: 'Lists made me slower.',
    topic: 'productivity',
  },
  {
    title: 'Five questions to ask before a rewrite',
    pillar: 'Education',
    postType: 'listicle',
    assetFormat: 'document',
    hook: 'Rewrites fail for the same five reasons.',
    topic: 'engineering',
  },
  {
    title: 'Behind the scenes of our offsite',
    pillar: 'Culture',
    postType: 'photo recap',
    assetFormat: 'image',
    hook: null,
    topic: 'team',
  },
  {
    title: 'The launch we postponed',
    pillar: 'Product',
    postType: 'story',
    assetFormat: 'video',
    hook: 'We had the press release ready.',
    topic: 'launches',
  },
  {
    title: 'What a bad quarter taught me',
    pillar: 'Founder journey',
    postType: 'reflection',
    assetFormat: 'text',
    hook: 'Revenue fell 20%.',
    topic: 'leadership',
  },
];

/**
 * `count` sample ideas for a project, cycling through a fixed set of briefs; every other one
 * gets a date in the coming weeks so that the calendar shows some.
 */
export async function seedIdeas(projectId: string, count: number) {
  const created = [];
  for (let i = 0; i < count; i++) {
    const brief = SEED_BRIEFS[i % SEED_BRIEFS.length]!;
    const date = i % 2 === 0 ? new Date(Date.now() + (i + 1) * 86_400_000).toISOString().slice(0, 10) : null;
    created.push(
      await createIdeaAsOperator({
        ...brief,
        projectId,
        title: i < SEED_BRIEFS.length ? brief.title : `${brief.title} (${i + 1})`,
        scheduledFor: date,
        status: i % 3 === 2 ? 'in_production' : 'inbox',
      }),
    );
  }
  return created;
}
