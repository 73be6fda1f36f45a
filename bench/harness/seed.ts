// A bench's customer, made through the operator provisioning code (ops/provision), so the
// workspace, its statuses, the project, its connection and the key are exactly what a real
// customer gets. Imported by a bench only after it has set its environment.

import { createProject, createWorkspace, issueApiKey } from '../../ops/provision';

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
