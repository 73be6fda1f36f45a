import { defineNoun, flag } from '../registry';

// Operator commands for the idea board (spec 2.9): `idea create`, `idea seed` and `idea link`. The
// library is imported lazily, as in every command module, so help works without a database.

export default defineNoun('idea', "Ideas on a project's board.", {
  create: {
    summary: "Add an idea to a project's board.",
    flags: {
      project: flag.project,
      title: { required: true, value: 'TITLE', help: 'idea title' },
      content: { value: 'TEXT', help: 'idea body' },
      pillar: { value: 'PILLAR', help: "content pillar (also decides the generated post's content type, docs/ideas.md)" },
      'post-type': { value: 'TYPE', help: 'post type' },
      'asset-format': { value: 'FORMAT', help: 'asset format' },
      hook: { value: 'TEXT', help: 'opening hook' },
      topic: { value: 'TOPIC', help: 'topic' },
      'scheduled-for': { value: 'YYYY-MM-DD', help: 'date on the calendar' },
      status: { choices: ['inbox', 'in_production'], help: 'writable status (default inbox)' },
    },
    examples: ['--project proj_x --title "How we cut deploy time" --pillar Education --scheduled-for 2026-12-01'],
    check(args) {
      const date = args.string('scheduled-for');
      if (date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(date)) throw args.usage('--scheduled-for must be a date in YYYY-MM-DD form');
    },
    async run(args) {
      const { createIdeaAsOperator } = await import('../../ideas');
      return createIdeaAsOperator({
        projectId: args.need('project'),
        title: args.need('title'),
        content: args.string('content'),
        pillar: args.string('pillar'),
        postType: args.string('post-type'),
        assetFormat: args.string('asset-format'),
        hook: args.string('hook'),
        topic: args.string('topic'),
        scheduledFor: args.string('scheduled-for'),
        status: args.string('status'),
      });
    },
  },
  seed: {
    summary: "Fill a project's idea board with sample ideas (some dated, some in production).",
    flags: {
      project: flag.project,
      count: flag.count('how many ideas (default 8, at most 200)'),
    },
    examples: ['--project proj_x --count 12'],
    check(args) {
      const count = args.string('count');
      if (count !== undefined && (!/^\d+$/.test(count) || Number(count) < 1 || Number(count) > 200))
        throw args.usage('--count must be an integer from 1 to 200');
    },
    async run(args) {
      const { seedIdeas } = await import('../../ideas');
      const ideas = await seedIdeas(args.need('project'), Number(args.string('count') ?? 8));
      return { count: ideas.length, ideas };
    },
  },
  link: {
    summary: 'Link an idea to a post (PATCH /v1/ideas/{id} linkedPostId): an inbox idea moves to in_production; --unlink clears it.',
    synopsis: '--idea idea_x (--post post_x | --unlink)',
    flags: {
      idea: { required: true, value: 'idea_x', help: 'idea id' },
      post: { value: 'post_x', help: "a post of the idea's project" },
      unlink: { type: 'boolean', help: 'remove the link' },
    },
    examples: ['--idea idea_x --post post_x', '--idea idea_x --unlink'],
    check(args) {
      if (args.has('post') === args.bool('unlink')) throw args.usage('give --post post_x or --unlink');
    },
    async run(args) {
      const { linkIdea } = await import('../../support');
      return linkIdea({ ideaId: args.need('idea'), postId: args.bool('unlink') ? null : args.need('post') });
    },
  },
});
