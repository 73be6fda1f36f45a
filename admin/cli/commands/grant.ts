import { defineNoun } from '../registry';

const provision = () => import('../../provision');

// Users' OAuth consents (spec 5.3). Passwords are set with `user set-password`.

export default defineNoun('grant', 'OAuth consents of users (revoking one kills its tokens).', {
  list: {
    summary: "List a user's OAuth consents with their workspace, access level, scopes and live tokens.",
    flags: { user: { required: true, value: 'EMAIL|usr_x', help: 'the user' } },
    async run(args) {
      const { listUserGrants } = await provision();
      return listUserGrants(args.need('user'));
    },
  },
  revoke: {
    redis: true,
    summary: "Revoke a user's OAuth consents and every token issued under them (one grant, one client's, or --all).",
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
      const { revokeUserGrants } = await provision();
      return revokeUserGrants({ user: args.need('user'), grantId: args.string('grant'), clientId: args.string('client') });
    },
  },
});
