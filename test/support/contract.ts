import { checkResponse } from '../../tooling/responseContract';

// The test-side half of the contract (issue 17): every JSON response the HTTP helper
// (test/support/app.ts) receives is checked (tooling/responseContract.ts) against the OpenAPI document the service
// publishes, so a field added to a response but not to its operation's `output` schema, an
// undocumented status or an error code an operation is not documented to answer fails the
// suite. Every operation declares its `output` (api/operation.ts), so every answer is held to
// its own schema. The OAuth endpoints are in the document too (api/openapi/oauth.ts); the OAuth
// test helpers (test/oauth/support.ts) call this on their answers. CONTRACT_CHECK=off skips the
// check, =warn reports without failing; the default is strict.

export type ContractMode = 'strict' | 'warn' | 'off';
export const contractMode = (): ContractMode => {
  const v = process.env.CONTRACT_CHECK;
  return v === 'off' || v === 'warn' ? v : 'strict';
};

export { checkResponse };

export const violations: string[] = [];

/** Called by the HTTP helper on each response. */
export function enforceContract(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  const mode = contractMode();
  if (mode === 'off') return;
  const problems = checkResponse(method, url, status, contentType, body);
  if (problems.length === 0) return;
  violations.push(...problems);
  if (mode === 'strict') throw new Error(`OpenAPI contract violation (CONTRACT_CHECK=warn to report only):\n  ${problems.join('\n  ')}`);
  for (const p of problems) console.warn(`[contract] ${p}`);
}
