// A bench's customer, made through the operator provisioning code (admin/provision,
// admin/support), so it is exactly what a real customer gets. Imported by a bench only after it
// has set its environment.

import { createProject, createWorkspace, issueApiKey } from '../../admin/provision';
import { createWebhookEndpoint } from '../../admin/support';

/** A workspace with one personal-brand project and an API key of the given scopes. */
export async function benchWorkspace(opts: {
  name: string;
  plan?: string;
  project: Omit<Parameters<typeof createProject>[0], 'workspaceId' | 'type'>;
  scopes: string[];
  keyName?: string;
}) {
  const workspace = await createWorkspace({ name: opts.name, plan: opts.plan ?? 'BUSINESS' });
  const project = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', ...opts.project });
  const key = (await issueApiKey({ workspaceId: workspace.id, scopes: opts.scopes, name: opts.keyName })).key as string;
  return { workspace, project, key };
}

/** A webhook endpoint made through the create operation itself, as an admin of the workspace: its id and signing secret. */
export async function webhookEndpoint(workspaceId: string, url: string, events: readonly string[]) {
  const { id, secret } = (await createWebhookEndpoint({ workspaceId, url, events: [...events] })) as { id: string; secret: string };
  return { id, secret };
}

/**
 * A BUSINESS workspace whose `accounts` personal-brand projects are each connected with a real
 * simulator token (admin/simulatedAccounts), and an API key of the given scopes.
 */
export async function connectedWorkspace(
  sim: import('../../sim/network/control').SimulatorControl,
  o: {
    name: string;
    accounts: number;
    person: (i: number) => Parameters<typeof import('../../admin/simulatedAccounts').connectedPersonalProject>[2];
    scopes: string[];
    keyName: string;
  },
): Promise<{ id: string; key: string; projectIds: string[] }> {
  const { connectedPersonalProject } = await import('../../admin/simulatedAccounts');
  const { id } = await createWorkspace({ name: o.name, plan: 'BUSINESS' });
  const projectIds: string[] = [];
  for (let i = 0; i < o.accounts; i++) projectIds.push((await connectedPersonalProject(sim, id, o.person(i))).project.id as string);
  const key = (await issueApiKey({ workspaceId: id, scopes: o.scopes, name: o.keyName })).key as string;
  return { id, key, projectIds };
}
