import { type Args, defineNoun, flag, PROGRAM } from '../registry';

const provision = () => import('../../provision');
const present = () => import('../views');

const SCOPES_HELP = 'comma- or space-separated: aliases read, write, or named scopes such as posts:publish (webhooks:manage is OAuth-only)';

function scopesArg(args: Args): string[] {
  const scopes = args
    .list('scopes')
    .flatMap((s) => s.split(/\s+/))
    .filter((s) => s !== '');
  if (!scopes.length) throw args.usage('--scopes needs at least one scope');
  return scopes;
}

function createScopes(args: Args): string[] {
  if (args.bool('empty-scopes')) {
    if (args.has('scopes')) throw args.usage('give --scopes or --empty-scopes, not both');
    return [];
  }
  if (!args.has('scopes')) throw args.usage('missing --scopes SCOPES (or --empty-scopes)');
  return scopesArg(args);
}

function expiryArg(args: Args): Date | null {
  const raw = args.string('expires-at');
  if (raw === undefined) return null;
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime())) throw args.usage(`--expires-at "${raw}" is not an ISO 8601 date-time`);
  if (at.getTime() <= Date.now()) throw args.usage('--expires-at is in the past');
  return at;
}

export default defineNoun('key', 'Workspace API keys (spec 5.1).', {
  create: {
    summary: 'Issue a workspace API key; the plaintext key is printed once and cannot be recovered.',
    flags: {
      workspace: flag.workspace,
      scopes: { multiple: true, value: 'SCOPES', help: `${SCOPES_HELP}; required unless --empty-scopes` },
      'empty-scopes': {
        type: 'boolean',
        help: 'a key with no scope at all: it authenticates, and every scoped call answers 403 scope_missing',
      },
      mode: { choices: ['live', 'test'], help: 'key prefix svc_sk_live_ or svc_sk_test_ (default live)' },
      name: { value: 'NAME', help: 'label for operators' },
      'expires-at': { value: 'ISO_8601', help: 'expiry date-time with offset, e.g. 2027-01-01T00:00:00Z' },
    },
    synopsis: '--workspace org_x --scopes SCOPES ... | --empty-scopes [--mode live|test] [--name NAME] [--expires-at ISO_8601]',
    examples: ['--workspace org_x --scopes read,write,posts:publish --name ci', '--workspace org_x --empty-scopes --name probe'],
    check(args) {
      createScopes(args);
      expiryArg(args);
    },
    async run(args) {
      const scopes = createScopes(args);
      const expiresAt = expiryArg(args);
      const [{ getApiKey, getWorkspace, issueApiKey }, { keyView }, { planAllowsApi }, { db }] = await Promise.all([
        provision(),
        present(),
        import('../../../lib/auth/apiKeys'),
        import('../../../lib/db'),
      ]);
      const workspace = await getWorkspace(args.need('workspace'));
      const issued = await issueApiKey({
        workspaceId: workspace.id,
        scopes,
        mode: (args.string('mode') ?? 'live') as 'live' | 'test',
        name: args.string('name'),
        expiresAt,
      });
      const billing = workspace.billing_workspace_id
        ? await db()('workspaces').where({ id: workspace.billing_workspace_id }).first('plan')
        : undefined;
      const plan = billing?.plan ?? workspace.plan;
      // The key is valid either way; say why it will not work yet instead of leaving the
      // operator to discover plan_not_eligible from a client.
      if (!planAllowsApi(plan))
        process.stderr.write(
          `${PROGRAM}: warning: plan ${plan} has no API access; requests with this key answer 403 plan_not_eligible until the plan changes\n`,
        );
      return { key: issued.key, ...keyView(await getApiKey(issued.id)) };
    },
  },
  scopes: {
    summary: 'Replace the scopes of a key; API processes apply it on the next request.',
    redis: true,
    flags: {
      key: { required: true, value: 'key_x', help: 'API key id' },
      scopes: { required: true, multiple: true, value: 'SCOPES', help: SCOPES_HELP },
    },
    check: scopesArg,
    async run(args) {
      const scopes = scopesArg(args);
      const [{ getApiKey, setApiKeyScopes }, { keyView }] = await Promise.all([provision(), present()]);
      const { id } = await setApiKeyScopes(args.need('key'), scopes);
      return keyView(await getApiKey(id));
    },
  },
  revoke: {
    summary: 'Revoke a key (refused everywhere within 5 seconds).',
    redis: true,
    flags: { key: { required: true, value: 'key_x', help: 'API key id' } },
    async run(args) {
      const [{ getApiKey, revokeApiKey }, { keyView }] = await Promise.all([provision(), present()]);
      const before = await getApiKey(args.need('key'));
      // Revoking twice would move revoked_at; the first revocation time is the useful one.
      if (before.revoked_at) return { ...keyView(before), alreadyRevoked: true };
      await revokeApiKey(before.id);
      return { ...keyView(await getApiKey(before.id)), alreadyRevoked: false };
    },
  },
  list: {
    summary: 'List the API keys of a workspace (last four characters only, never the key).',
    flags: { workspace: flag.workspace },
    async run(args) {
      const [{ getWorkspace, listApiKeys }, { keyView }] = await Promise.all([provision(), present()]);
      const w = await getWorkspace(args.need('workspace'));
      return (await listApiKeys(w.id)).map((k: Record<string, any>) => keyView(k));
    },
  },
});
