import { defineNoun } from '../registry';

// OAuth access tokens without the browser flow (spec 5.3), for support and scripted tests.

export default defineNoun('oauth', 'OAuth access tokens issued by an operator.', {
  token: {
    summary:
      'Mint an OAuth access token for a user, client and scope set (a grant and token family like a code exchange; no refresh token).',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user the token acts for' },
      client: { required: true, value: 'cli_x', help: 'a registered OAuth client' },
      scopes: { required: true, multiple: true, value: 'SCOPES', help: 'comma- or space-separated scopes or aliases (read, write)' },
      workspace: { value: 'org_x', help: "the token's workspace (default: the user's first membership)" },
      project: { value: 'proj_x', help: 'pinned default project' },
    },
    examples: ['--user ann@example.com --client cli_x --scopes read,posts:write'],
    async run(args) {
      const { mintOAuthToken } = await import('../../../ops/operate');
      return mintOAuthToken({
        user: args.need('user'),
        clientId: args.need('client'),
        workspaceId: args.string('workspace'),
        projectId: args.string('project'),
        scopes: args
          .list('scopes')
          .flatMap((s) => s.split(/\s+/))
          .filter(Boolean),
      });
    },
  },
});
