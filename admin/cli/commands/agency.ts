import { defineNoun } from '../registry';

const provision = () => import('../../provision');

// Multi-workspace reach (spec 5.5): the owners of an agency act as admins in the client
// workspaces it pays for.

export default defineNoun('agency', 'Agency ownership: who reaches the client workspaces an agency pays for.', {
  'add-owner': {
    summary: 'Make a user an owner of the agency billing a client workspace (reach agency_owner, acts as admin there).',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user' },
      workspace: { required: true, value: 'org_x', help: 'the client workspace' },
      agency: { value: 'org_x', help: 'bill the client workspace to this agency first (default: its current billing workspace)' },
    },
    examples: ['--user ann@agency.example --workspace org_client --agency org_agency'],
    async run(args) {
      const { makeAgencyOwner } = await provision();
      return makeAgencyOwner({
        user: args.need('user'),
        clientWorkspaceId: args.need('workspace'),
        agencyWorkspaceId: args.string('agency'),
      });
    },
  },
  'remove-owner': {
    summary: "End a user's ownership of an agency (their reach into its client workspaces ends within a minute).",
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user' },
      agency: { required: true, value: 'org_x', help: 'the agency workspace' },
    },
    async run(args) {
      const { removeAgencyOwner } = await provision();
      return removeAgencyOwner({ user: args.need('user'), agencyWorkspaceId: args.need('agency') });
    },
  },
});
