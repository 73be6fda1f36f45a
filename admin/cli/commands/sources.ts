import { defineNoun, flag } from '../registry';

// Operator commands for sources (docs/sources.md "Operating"): list a workspace's sources,
// inspect one with its ingest jobs, run a failed ingest again.

export default defineNoun('sources', 'Sources (text and file sources, their SOURCE_INGEST jobs).', {
  list: {
    summary: "A workspace's sources, newest first, with their status and ingest job status.",
    flags: {
      workspace: flag.workspace,
      project: flag.onlyProject,
      status: { choices: ['Processing', 'Success', 'Failed'], help: 'only this status' },
      limit: flag.count('at most N rows (default 50, at most 500)'),
    },
    examples: ['--workspace org_x --status Failed'],
    check(args) {
      const limit = args.string('limit');
      if (limit !== undefined && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 500))
        throw args.usage('--limit must be an integer from 1 to 500');
    },
    async run(args) {
      const { listSources } = await import('../../sources');
      const limit = args.string('limit');
      return listSources({
        workspaceId: args.need('workspace'),
        projectId: args.string('project'),
        status: args.string('status'),
        limit: limit === undefined ? undefined : Number(limit),
      });
    },
  },
  inspect: {
    summary: 'One source (preview, topics, hooks), its latest ingest job and every earlier attempt.',
    flags: { source: { required: true, value: 'src_x', help: 'source id' } },
    examples: ['--source src_x'],
    async run(args) {
      const { inspectSource } = await import('../../sources');
      return inspectSource(args.need('source'));
    },
  },
  rerun: {
    summary: 'Run the ingest of a file source again when its latest job FAILED or was CANCELLED (a new SOURCE_INGEST job).',
    flags: { source: { required: true, value: 'src_x', help: 'source id' } },
    examples: ['--source src_x'],
    async run(args) {
      const { rerunSourceIngest } = await import('../../sources');
      return rerunSourceIngest(args.need('source'));
    },
  },
});
