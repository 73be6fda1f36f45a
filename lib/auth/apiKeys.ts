import { planLimits } from '../config';
import { keyedHash, randomSecret } from '../crypto';
import { db } from '../db';
import { newId } from '../ids';
import { expandScopes } from '../scopes';

// spec 5.1: workspace API keys, stored as a keyed hash; the plaintext exists only in the
// answer to the call that created it. Authenticating a presented key (with its per-process
// cache) is the API's business: api/auth/apiKeys.ts.

export const API_KEY_PREFIXES = { live: 'svc_sk_live_', test: 'svc_sk_test_' } as const;

export function planAllowsApi(plan: string): boolean {
  return planLimits(plan).apiAccess;
}

/** `scopes` may be empty: such a key authenticates and is refused every scoped call (spec 5.1). */
export async function createApiKey(input: {
  workspaceId: string;
  scopes: string[];
  mode: 'live' | 'test';
  name?: string;
  expiresAt?: Date | null;
}) {
  const plaintext = API_KEY_PREFIXES[input.mode] + randomSecret(40);
  const id = newId('apiKey');
  const scopes = expandScopes(input.scopes);
  await db()('api_keys').insert({
    id,
    workspace_id: input.workspaceId,
    name: input.name ?? '',
    mode: input.mode,
    key_hash: keyedHash(plaintext),
    last4: plaintext.slice(-4),
    scopes,
    expires_at: input.expiresAt ?? null,
  });
  return { id, key: plaintext, scopes, mode: input.mode, last4: plaintext.slice(-4) };
}
