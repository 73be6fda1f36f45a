import { LLM_STUB_FAILURES } from '../../../sim/llm/control';
import { type Args, defineNoun, flag } from '../registry';

// Scripted faults for the LLM simulator (sim/llm, which `npm start` runs when LLM_BASE_URL is
// unset), never a real provider: the counterpart of `network fail` for generation. The built-in
// offline writer (LLM_WRITER=builtin) makes no call to fail.

const urlFlag = {
  url: { value: 'URL', help: 'the simulator (default: LLM_SIMULATOR_URL, else LLM_BASE_URL, else the local one on LLM_STUB_PORT, 3901)' },
};

async function sim(args: Args) {
  const [{ createLlmSimulatorControl }, { serviceAddresses }] = await Promise.all([
    import('../../../sim/llm/control'),
    import('../../../lib/config'),
  ]);
  const url = args.string('url') ?? process.env.LLM_SIMULATOR_URL ?? serviceAddresses().llm?.address;
  if (!url) throw new Error('LLM_WRITER=builtin: generation calls no LLM, so there is no simulator to script (give --url to reach one)');
  return createLlmSimulatorControl(url);
}

export default defineNoun('llm', 'Fault injection on the LLM simulator (generation writer calls).', {
  fail: {
    summary: 'Fail the next N writer calls: provider errors (rate_limited, server_error, ...), empty or filtered answers, or a hang.',
    database: false,
    flags: {
      kind: { choices: LLM_STUB_FAILURES, help: 'what the calls get (default server_error, retryable)' },
      times: flag.count('how many calls (default 1)'),
      ...urlFlag,
    },
    examples: ['--times 3', '--kind rate_limited --times 2'],
    check: (args) => {
      args.int('times', 1, { min: 1, max: 10_000 });
    },
    run: async (args) =>
      (await sim(args)).fail((args.string('kind') ?? 'server_error') as (typeof LLM_STUB_FAILURES)[number], args.int('times', 1)),
  },
  latency: {
    summary: 'Add latency to every writer call (0 removes it).',
    database: false,
    flags: { ms: { required: true, value: 'MS', help: 'milliseconds before each answer' }, ...urlFlag },
    check: (args) => {
      args.int('ms', 0, { max: 600_000 });
    },
    run: async (args) => (await sim(args)).setLatency(args.int('ms', 0)),
  },
  'clear-faults': {
    summary: 'Drop queued failures and latency, and release hung calls.',
    database: false,
    flags: urlFlag,
    run: async (args) => (await sim(args)).clearFaults(),
  },
  state: {
    summary: 'Queued failures, latency and call counts of the simulator.',
    database: false,
    flags: urlFlag,
    run: async (args) => (await sim(args)).state(),
  },
});
