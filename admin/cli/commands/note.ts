import { defineNoun, flag } from '../registry';

// Demo and support notes, made through the API's notes.create operation (admin/seed.ts).

export default defineNoun('note', 'Notes for demos and support (made through the API operations).', {
  create: {
    summary: 'Create notes, each with a calendar slot (the next free one, or from --slot-date).',
    flags: {
      workspace: flag.workspace,
      project: flag.project,
      count: flag.count('how many notes (default 1, at most 500)'),
      content: { value: 'TEXT', help: 'note text (default: demo text, different per note)' },
      'content-type': { value: 'TYPE', help: 'PERSONAL, BUSINESS_INTERNAL, BUSINESS_EXTERNAL, EDUCATIONAL or UNKNOWN' },
      'slot-date': {
        value: 'ISO_8601',
        help: "slot of the first note (offset-less = the project's timezone); default: the next free weekday 09:00",
      },
      'spacing-minutes': { value: 'M', help: 'with --count and --slot-date: minutes between slots (default 1440)' },
    },
    examples: [
      '--workspace org_x --project proj_x --count 10',
      '--workspace org_x --project proj_x --content "Talk about hiring" --slot-date 2027-01-15T09:00',
    ],
    check(args) {
      args.int('count', 1, { min: 1, max: 500 });
      args.int('spacing-minutes', 1440, { min: 1 });
    },
    async run(args) {
      const { seedNotes } = await import('../../seed');
      return seedNotes({
        workspaceId: args.need('workspace'),
        projectId: args.need('project'),
        count: args.int('count', 1),
        content: args.string('content'),
        contentType: args.string('content-type'),
        slotDate: args.string('slot-date'),
        spacingMinutes: args.int('spacing-minutes', 1440),
      });
    },
  },
});
