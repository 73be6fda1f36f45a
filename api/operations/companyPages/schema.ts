import { paginationInput } from '../../pagination';
import { z } from 'zod';
// GET /v1/company-pages: the company page answer (lib/presenters/companyPages.ts).

export { companyPageSchema, type CompanyPage } from '../../../lib/presenters/companyPages';

export const listCompanyPagesInput = z.object({ ...paginationInput }).strict();
