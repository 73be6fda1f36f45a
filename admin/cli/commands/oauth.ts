import { defineNoun } from '../registry';

// OAuth access tokens without the browser flow (spec 5.3), for support and scripted tests.

export default defineNoun('oauth', 'OAuth access tokens issued by an operator.', {
  token: {
    summary:
      'Mint an OAuth access token for a user, client and scope set (a grant and token family like a code exchange; a refresh token with offline_access).',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user the token acts for' },
      client: { required: true, value: 'cli_x', help: 'a registered OAuth client' },
      scopes: { required: true, multiple: true, value: 'SCOPES', help: 'comma- or space-separated scopes or aliases (read, write)' },
      workspace: { value: 'org_x', help: "the token's workspace (default: the user's first membership)" },
      project: { value: 'proj_x', help: 'pinned default project' },
      'expires-in': {
        value: 'SECONDS',
        help: 'a shorter life than the configured one (OAUTH_ACCESS_TOKEN_TTL_S, spec 8: 3600), to test refresh handling',
      },
    },
    examples: [
      '--user ann@example.com --client cli_x --scopes read,posts:write',
      '--user ann@example.com --client cli_x --scopes read,offline_access --expires-in 30',
    ],
    check(args) {
      args.int('expires-in', 1, { min: 1 });
    },
    async run(args) {
      const [{ mintOAuthToken }, { config }] = await Promise.all([import('../../controls'), import('../../../lib/config')]);
      // Only shorter: a token living longer than the spec's hour would be one no client can get.
      const expiresIn = args.has('expires-in') ? args.int('expires-in', 1, { min: 1, max: config.oauth.accessTokenTtlS }) : undefined;
      return mintOAuthToken({
        user: args.need('user'),
        clientId: args.need('client'),
        workspaceId: args.string('workspace'),
        projectId: args.string('project'),
        expiresInSeconds: expiresIn,
        scopes: args
          .list('scopes')
          .flatMap((s) => s.split(/\s+/))
          .filter(Boolean),
      });
    },
  },
});
