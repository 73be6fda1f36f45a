import { z } from 'zod';
import { Project } from '../../../lib/models';
import type { AuthContext } from '../../auth/context';
import { defineOperation } from '../../operation';
import { companyPageSchema, type CompanyPage } from './schema';
import { page } from '../../output';
import { keysetPage, paginationInput, parseLimit } from '../../pagination';
import { presentProject, projectQuery, type ProjectRow } from '../projects/present';

// GET /v1/company-pages (spec 4.1 names it; its shape is not shown): the company-page projects,
// each with the personal account it publishes through (spec 2.6: a company page has no
// connection of its own) and whether it can publish. Cursor-paginated like GET /v1/projects,
// with the same access: any valid token, client-role accounts read it normally (spec 5.4).

interface CompanyPageRow extends ProjectRow {
  linked_project_id: string | null;
  linked_username: string | null;
}

function present(row: CompanyPageRow): CompanyPage {
  const project = presentProject(row);
  return {
    ...project,
    // The admin's personal account the page is linked to: its project in this workspace (when
    // the caller can see one) and the connected person's name; null when never linked.
    linkedAccount: row.c_id ? { projectId: row.linked_project_id, name: row.c_display_name, username: row.linked_username } : null,
    canPublish: project.network?.canPublish ?? false,
  };
}

export const listCompanyPages = defineOperation({
  name: 'companyPages.list',
  summary: 'Company-page projects with their linked personal account and whether they can publish.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({ ...paginationInput }).strict(),
  output: page(companyPageSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    const q = projectQuery(auth).where('projects.type', 'COMPANY_PAGE');
    // The personal-brand (or amplifier) project holding the same connection, oldest first.
    const linked = visibleLinked(auth);
    q.select(linked.id, linked.username);
    return keysetPage<CompanyPageRow, ReturnType<typeof present>>(q, {
      limit,
      cursor: input.cursor,
      filters: { resource: 'company-pages' },
      table: 'projects',
      present,
    });
  },
});

/** The oldest personal-brand (or amplifier) project the caller sees on the same connection. */
function visibleLinked(auth: AuthContext) {
  const sub = (col: 'id' | 'username') =>
    Project.visibleTo(auth)
      .alias('lp')
      .whereColumn('lp.connection_id', 'projects.connection_id')
      .whereNot('lp.type', 'COMPANY_PAGE')
      .orderBy([
        { column: 'lp.created_at', order: 'asc' },
        { column: 'lp.id', order: 'asc' },
      ])
      .limit(1)
      .select(`lp.${col}`)
      .as(`linked_${col === 'id' ? 'project_id' : col}`);
  return { id: sub('id'), username: sub('username') };
}
