import { z } from 'zod';
import { objectComponent } from './output';
import { presentProject, projectShape, type ProjectRow } from './projects';

// GET /v1/company-pages: a company page project and the personal account it publishes through.

export const companyPageSchema = objectComponent('CompanyPage', {
  ...projectShape,
  linkedAccount: z
    .object({
      projectId: z.string().nullable().describe("the linked personal account's project here, when the caller can see one"),
      name: z.string().nullable(),
      username: z.string().nullable(),
    })
    .strict()
    .nullable()
    .describe('the personal account the page publishes through; null when never linked'),
  canPublish: z.boolean(),
});

export type CompanyPage = z.infer<typeof companyPageSchema>;

/** A company page project, with its linked personal account's project and username. */
export interface CompanyPageRow extends ProjectRow {
  linked_project_id: string | null;
  linked_username: string | null;
}

export function presentCompanyPage(row: CompanyPageRow): CompanyPage {
  const project = presentProject(row);
  return {
    ...project,
    // The admin's personal account the page is linked to: its project in this workspace (when
    // the caller can see one) and the connected person's name; null when never linked.
    linkedAccount: row.c_id ? { projectId: row.linked_project_id, name: row.c_display_name, username: row.linked_username } : null,
    canPublish: project.network?.canPublish ?? false,
  };
}
