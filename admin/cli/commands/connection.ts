import { config, serviceAddresses } from '../../../lib/config';
import { type Args, defineNoun, flag } from '../registry';

// Connecting an account happens in the dashboard (spec 2.6: reconnecting cannot be done through
// the API); these commands stand in for it.

function dateArg(args: Args, name: string): Date | undefined {
  const raw = args.string(name);
  if (raw === undefined) return undefined;
  const at = new Date(raw);
  if (Number.isNaN(at.getTime())) throw args.usage(`--${name} "${raw}" is not an ISO 8601 date-time`);
  return at;
}

const projectFlags = {
  workspace: flag.workspace,
  project: flag.project,
} as const;

export default defineNoun('connection', 'Network connections of projects (tokens, expiry, health).', {
  set: {
    summary: "Store a project's network tokens and expiry (a company page stores them on its linked personal account).",
    flags: {
      workspace: flag.workspace,
      project: flag.project,
      'access-token': { value: 'TOKEN', help: 'network access token (omit with --from-simulator)' },
      'refresh-token': { value: 'TOKEN', help: 'network refresh token' },
      'expires-at': { value: 'ISO_8601', help: 'access-token expiry' },
      'person-id': { value: 'ID', help: 'network person id of the account' },
      name: { value: 'NAME', help: 'display name of the account' },
      'from-simulator': {
        type: 'boolean',
        help: `issue fresh tokens from the network simulator at NETWORK_API_URL (default the local simulator on NETWORK_SIMULATOR_PORT, ${config.network.simulatorPort})`,
      },
      'expires-in': { value: 'SECONDS', help: 'with --from-simulator: access-token lifetime' },
    },
    examples: [
      '--workspace org_x --project proj_x --from-simulator --name "Ann Lee"',
      '--workspace org_x --project proj_x --access-token AQX... --refresh-token AQW... --expires-at 2027-01-20T00:00:00Z --person-id abc123',
    ],
    check(args) {
      if (!args.bool('from-simulator') && (!args.has('access-token') || !args.has('expires-at') || !args.has('person-id'))) {
        throw args.usage('give --access-token, --expires-at and --person-id, or --from-simulator');
      }
      dateArg(args, 'expires-at');
    },
    async run(args) {
      const [{ storeConnectionTokens }, { getWorkspace }, { randomBase62 }, { createSimulatorControl }] = await Promise.all([
        import('../../connections'),
        import('../../provision'),
        import('../../../lib/ids'),
        import('../../../sim/network/control'),
      ]);
      const workspace = await getWorkspace(args.need('workspace'));
      if (args.bool('from-simulator')) {
        const sim = createSimulatorControl(serviceAddresses().network.address);
        const personId = args.string('person-id') ?? `p${randomBase62(10)}`;
        const expiresIn = args.string('expires-in');
        const issued = await sim.issueToken({
          personId,
          name: args.string('name'),
          expiresInSeconds: expiresIn ? Number(expiresIn) : undefined,
        });
        return storeConnectionTokens({
          workspaceId: workspace.id,
          projectId: args.need('project'),
          accessToken: issued.accessToken,
          refreshToken: issued.refreshToken,
          expiresAt: new Date(issued.expiresAt),
          refreshExpiresAt: issued.refreshTokenExpiresAt ? new Date(issued.refreshTokenExpiresAt) : null,
          personId,
          name: args.string('name'),
        });
      }
      return storeConnectionTokens({
        workspaceId: workspace.id,
        projectId: args.need('project'),
        accessToken: args.need('access-token'),
        refreshToken: args.string('refresh-token') ?? null,
        expiresAt: dateArg(args, 'expires-at')!,
        personId: args.need('person-id'),
        name: args.string('name'),
      });
    },
  },
  revoke: {
    summary: "Mark a project's connection revoked, as when the network withdraws the authorization (state revoked).",
    flags: projectFlags,
    async run(args) {
      const { setConnectionState } = await import('../../controls');
      return setConnectionState({ workspaceId: args.need('workspace'), projectId: args.need('project'), state: 'revoked' });
    },
  },
  'clear-tokens': {
    summary: "Drop a project's stored network tokens (state disconnected).",
    flags: projectFlags,
    async run(args) {
      const { setConnectionState } = await import('../../controls');
      return setConnectionState({ workspaceId: args.need('workspace'), projectId: args.need('project'), state: 'clear-tokens' });
    },
  },
  check: {
    summary: "Run a project's connection health check now (signals its health workflow) and print the outcome.",
    flags: { ...projectFlags, 'timeout-ms': { value: 'MS', help: 'how long to wait for the result (default 30000)' } },
    check: (args) => {
      args.int('timeout-ms', 30_000, { min: 1 });
    },
    async run(args) {
      const { checkConnectionNow } = await import('../../controls');
      try {
        return await checkConnectionNow({
          workspaceId: args.need('workspace'),
          projectId: args.need('project'),
          timeoutMs: args.int('timeout-ms', 30_000),
        });
      } finally {
        const { closeTemporalClient } = await import('../../../lib/temporal/client');
        await closeTemporalClient();
      }
    },
  },
});
