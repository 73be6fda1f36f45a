import { z } from 'zod';
import { component } from '../../output';
import { projectShape } from '../projects/schema';

// GET /v1/company-pages: a company page project and the personal account it publishes through.

export const companyPageSchema = component(
  'CompanyPage',
  z
    .object({
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
    })
    .strict(),
);

export type CompanyPage = z.infer<typeof companyPageSchema>;
