import { STATUS_CATEGORIES } from '../../../lib/posts/statuses';
import { defineNoun, flag } from '../registry';

// The workspace's post statuses (spec 2.7 statusId / statusCategory, custom
// statuses): lib/posts/statuses.ts holds the rules, and every answer is the status as
// GET /v1/post-statuses shows it (admin/support.ts).

const support = () => import('../../support');
const status = { required: true, value: 'pst_x', help: 'post status id' } as const;

export default defineNoun('post-status', 'Custom post statuses (board columns) and the default of each category.', {
  list: {
    summary: "A workspace's post statuses in board order, with their category, default flag and post count.",
    flags: { workspace: flag.workspace },
    async run(args) {
      const { listPostStatuses } = await support();
      return listPostStatuses(args.need('workspace'));
    },
  },
  create: {
    summary: 'Add a custom status to a category (optionally as its default).',
    flags: {
      workspace: flag.workspace,
      category: { required: true, choices: STATUS_CATEGORIES, help: 'what a post in this status is' },
      title: { required: true, value: 'TITLE', help: `title, unique in the workspace (at most 120 characters)` },
      default: { type: 'boolean', help: "make it the category's default (where statusCategory moves posts)" },
    },
    examples: ['--workspace org_x --category review --title "Legal review"'],
    async run(args) {
      const { createPostStatus } = await support();
      return createPostStatus({
        workspaceId: args.need('workspace'),
        category: args.need('category'),
        title: args.need('title'),
        makeDefault: args.bool('default'),
      });
    },
  },
  rename: {
    summary: 'Change the title of a status (posts keep it).',
    flags: { status, title: { required: true, value: 'TITLE', help: 'new title' } },
    async run(args) {
      const { renamePostStatus } = await support();
      return renamePostStatus({ statusId: args.need('status'), title: args.need('title') });
    },
  },
  'set-default': {
    summary: "Make a status its category's default: PATCH statusCategory and new posts of that category land there.",
    flags: { status },
    async run(args) {
      const { setDefaultPostStatus } = await support();
      return setDefaultPostStatus({ statusId: args.need('status') });
    },
  },
});
