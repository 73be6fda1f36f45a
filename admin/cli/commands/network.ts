import { serviceAddresses } from '../../../lib/config';
import { createSimulatorControl, SIM_OPERATIONS, type SimOperationFilter } from '../../../sim/network/control';
import { type Args, defineNoun, flag } from '../registry';

// Scripted faults for the local network simulator (never the real network): fail the next N
// calls, revoke or expire a token, empty an organization's admin set, add latency.

const OPS = ['any', ...SIM_OPERATIONS];
const sim = () => createSimulatorControl(serviceAddresses().network.address);
const count = (args: Args, name: string, fallback: number) => {
  const raw = args.string(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw args.usage(`--${name} must be a whole number`);
  return Number(raw);
};

export default defineNoun('network', 'Fault injection on the local network simulator.', {
  fail: {
    summary: 'Fail the next N simulator calls with a transient (503) or permanent (400) error, or lose their answers.',
    database: false,
    flags: {
      kind: { required: true, choices: ['transient', 'permanent', 'lost_response'], help: 'what the calls get' },
      times: flag.count('how many calls (default 1)'),
      operation: { choices: OPS, help: 'only this operation (default any)' },
    },
    check: (args) => {
      count(args, 'times', 1);
    },
    run: (args) =>
      sim().addFault({
        kind: args.need('kind') as 'transient',
        times: count(args, 'times', 1),
        operation: (args.string('operation') ?? 'any') as SimOperationFilter,
      }),
  },
  'clear-faults': {
    summary: 'Remove every scripted fault.',
    database: false,
    run: async () => {
      await sim().clearFaults();
      return { cleared: true };
    },
  },
  latency: {
    summary: 'Add latency to simulator calls (0 removes it).',
    database: false,
    flags: {
      ms: { required: true, value: 'MS', help: 'milliseconds' },
      operation: { choices: OPS, help: 'only this operation (default any)' },
    },
    check: (args) => {
      count(args, 'ms', 0);
    },
    run: (args) => sim().setLatency({ ms: count(args, 'ms', 0), operation: (args.string('operation') ?? 'any') as SimOperationFilter }),
  },
  'revoke-token': {
    summary: "Withdraw a person's grant (every token issued to them) on the simulator.",
    database: false,
    flags: { 'person-id': { value: 'ID', help: 'network person id' }, token: { value: 'TOKEN', help: 'one access or refresh token' } },
    check: (args) => {
      if (!args.has('person-id') && !args.has('token')) throw args.usage('give --person-id or --token');
    },
    run: (args) => sim().revokeToken(args.has('token') ? { token: args.need('token') } : { personId: args.need('person-id') }),
  },
  'expire-token': {
    summary: 'Make an access token (and optionally its refresh token) lapse now.',
    database: false,
    flags: {
      token: { required: true, value: 'TOKEN', help: 'access token' },
      'include-refresh': { type: 'boolean', help: 'expire its refresh token too' },
    },
    run: (args) => sim().expireToken({ token: args.need('token'), includeRefresh: args.bool('include-refresh') }),
  },
  admins: {
    summary: "Replace an organization's admin set on the simulator (no --person-id empties it).",
    database: false,
    flags: {
      organization: { required: true, value: 'ORG_ID', help: 'network organization id' },
      'person-id': { multiple: true, value: 'ID', help: 'admin person id (repeatable)' },
    },
    run: (args) => sim().setOrganizationAdmins(args.need('organization'), args.list('person-id')),
  },
  posts: {
    summary: 'Posts the simulator received (filter by reference = our post id).',
    database: false,
    flags: { reference: { value: 'post_x', help: 'idempotency reference' }, limit: flag.count('at most N (default 50)') },
    run: (args) => sim().listPosts({ reference: args.string('reference'), limit: count(args, 'limit', 50) }),
  },
  counts: { summary: 'Call and post counters of the simulator.', database: false, run: () => sim().counts() },
});
