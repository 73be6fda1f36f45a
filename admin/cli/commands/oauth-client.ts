import { defineNoun } from '../registry';

const oauthAdmin = () => import('../../oauth');

// Dynamically registered OAuth clients (RFC 7591, spec 5.3.1).

export default defineNoun('oauth-client', 'Dynamically registered OAuth clients.', {
  list: {
    summary: 'List registered OAuth clients.',
    async run() {
      const { listClients } = await oauthAdmin();
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
      const { setClientTrust } = await oauthAdmin();
      return setClientTrust(args.need('client'), !args.bool('revoke'));
    },
  },
});
