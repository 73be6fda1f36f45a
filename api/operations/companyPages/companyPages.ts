import { Project } from '../../../lib/models';
import type { AuthContext } from '../../auth/context';
import { defineOperation } from '../../operation';
import { presentCompanyPage, type CompanyPage, type CompanyPageRow } from '../../../lib/presenters/companyPages';
import { companyPageSchema, listCompanyPagesInput } from './schema';
import { page } from '../../output';
import { keysetPage, parseLimit } from '../../pagination';
import { projectQuery } from '../projects/queries';
import { projectReadAccess } from '../projects/projects';

// GET /v1/company-pages (spec 4.1 names it; its shape is not shown): the company-page projects,
// each with the personal account it publishes through (spec 2.6: a company page has no
// connection of its own) and whether it can publish. Cursor-paginated like GET /v1/projects,
// with the same access (projectReadAccess).

export const listCompanyPages = defineOperation({
  name: 'companyPages.list',
  summary: 'Company-page projects with their linked personal account and whether they can publish.',
  ...projectReadAccess,
  input: listCompanyPagesInput,
  output: page(companyPageSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    const q = projectQuery(auth).where('projects.type', 'COMPANY_PAGE');
    // The personal-brand (or amplifier) project holding the same connection, oldest first.
    const linked = visibleLinked(auth);
    q.select(linked.id, linked.username);
    return keysetPage<CompanyPageRow, CompanyPage>(q, {
      limit,
      cursor: input.cursor,
      filters: { resource: 'company-pages' },
      table: 'projects',
      present: presentCompanyPage,
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
