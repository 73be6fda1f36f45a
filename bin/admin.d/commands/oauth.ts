import { listUserGrants, makeAgencyOwner, removeAgencyOwner, revokeUserGrants } from '../../../ops/provision';
import { listClients, setClientTrust } from '../../../lib/oauth/admin';
import { registerCommands } from '../registry';

// OAuth and multi-workspace reach (spec 5.3, 5.5): agency owners, users' consents ("grants")
// and registered clients. Passwords are set with `user set-password`.

registerCommands('agency', {
  'add-owner': {
    summary: 'Make a user an owner of the agency billing a client workspace (reach agency_owner, acts as admin there).',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user' },
      workspace: { required: true, value: 'org_x', help: 'the client workspace' },
      agency: { value: 'org_x', help: 'bill the client workspace to this agency first (default: its current billing workspace)' },
    },
    examples: ['--user ann@agency.example --workspace org_client --agency org_agency'],
    async run(args) {
      return makeAgencyOwner({ user: args.need('user'), clientWorkspaceId: args.need('workspace'), agencyWorkspaceId: args.string('agency') });
    },
  },
  'remove-owner': {
    summary: 'End a user\'s ownership of an agency (their reach into its client workspaces ends within a minute).',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user' },
      agency: { required: true, value: 'org_x', help: 'the agency workspace' },
    },
    async run(args) {
      return removeAgencyOwner({ user: args.need('user'), agencyWorkspaceId: args.need('agency') });
    },
  },
}, { summary: 'Agency ownership: who reaches the client workspaces an agency pays for.' });

registerCommands('grant', {
  list: {
    summary: 'List a user\'s OAuth consents with their workspace, access level, scopes and live tokens.',
    flags: { user: { required: true, value: 'EMAIL|usr_x', help: 'the user' } },
    async run(args) {
      return listUserGrants(args.need('user'));
    },
  },
  revoke: {
    summary: 'Revoke a user\'s OAuth consents and every token issued under them (one grant, one client\'s, or --all).',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user' },
      grant: { value: 'grt_x', help: 'one grant' },
      client: { value: 'cli_x', help: 'every grant of this client' },
      all: { type: 'boolean', help: 'every grant of the user' },
    },
    examples: ['--user ann@example.com --grant grt_x', '--user ann@example.com --all'],
    check(args) {
      const given = ['grant', 'client'].filter((f) => args.has(f)).length + (args.bool('all') ? 1 : 0);
      if (given !== 1) throw args.usage('give exactly one of --grant, --client or --all');
    },
    async run(args) {
      return revokeUserGrants({ user: args.need('user'), grantId: args.string('grant'), clientId: args.string('client') });
    },
  },
}, { summary: 'OAuth consents of users (revoking one kills its tokens).' });

registerCommands('oauth-client', {
  list: {
    summary: 'List registered OAuth clients.',
    async run() {
      return listClients();
    },
  },
  trust: {
    summary: 'Mark a client as verified on the consent page (or, with --revoke, as unverified again).',
    flags: {
      client: { required: true, value: 'cli_x', help: 'the client' },
      revoke: { type: 'boolean', help: 'back to unverified' },
    },
    async run(args) {
      return setClientTrust(args.need('client'), !args.bool('revoke'));
    },
  },
}, { summary: 'Dynamically registered OAuth clients.' });
