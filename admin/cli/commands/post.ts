import { STATUS_CATEGORIES } from '../../../lib/posts/statuses';
import { defineNoun, flag } from '../registry';

// Demo and support posts, made through the API's own operations (admin/seed.ts): a post given a
// schedule goes through PATCH /v1/posts/{id}'s scheduling path and really publishes.

export default defineNoun('post', 'Posts for demos and support (made through the API operations).', {
  create: {
    summary: 'Create posts (drafts, a board status, or scheduled through the API scheduling path so they publish).',
    flags: {
      workspace: flag.workspace,
      project: flag.project,
      count: flag.count('how many posts (default 1, at most 500)'),
      content: { value: 'TEXT', help: 'post text (default: demo text, different per post)' },
      title: { value: 'TEXT', help: 'name of the post (default: from its first line)' },
      'content-type': { value: 'TYPE', help: 'PERSONAL, BUSINESS_INTERNAL, BUSINESS_EXTERNAL, EDUCATIONAL or UNKNOWN (default PERSONAL)' },
      'status-category': { choices: STATUS_CATEGORIES, help: "board status: the workspace's default status of that category" },
      'status-id': { value: 'pst_x', help: 'board status by id (GET /v1/post-statuses)' },
      'scheduled-for': {
        value: 'ISO_8601',
        help: "schedule the first post (offset-less = the project's timezone); the connection is verified as for PATCH",
      },
      'spacing-minutes': { value: 'M', help: 'with --count and --scheduled-for: minutes between posts (default 60)' },
    },
    examples: [
      '--workspace org_x --project proj_x --count 5 --status-category review',
      '--workspace org_x --project proj_x --scheduled-for 2027-01-15T09:00 --count 3 --spacing-minutes 1440',
    ],
    check(args) {
      args.int('count', 1, { min: 1, max: 500 });
      args.int('spacing-minutes', 60, { min: 1 });
      if (args.has('status-category') && args.has('status-id')) throw args.usage('give --status-category or --status-id, not both');
    },
    async run(args) {
      const { seedPosts } = await import('../../seed');
      try {
        return await seedPosts({
          workspaceId: args.need('workspace'),
          projectId: args.need('project'),
          count: args.int('count', 1),
          content: args.string('content'),
          title: args.string('title'),
          contentType: args.string('content-type'),
          statusCategory: args.string('status-category'),
          statusId: args.string('status-id'),
          scheduledFor: args.string('scheduled-for'),
          spacingMinutes: args.int('spacing-minutes', 60),
        });
      } finally {
        // A scheduled post signalled its publish workflow through a Temporal client.
        const { closeTemporalClient } = await import('../../../lib/temporal/client');
        await closeTemporalClient();
      }
    },
  },
});
