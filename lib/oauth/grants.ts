import { publishTokenInvalidation } from '../auth/invalidation';
import { db } from '../db';
import { revokeFamilies } from './tokens';

// A user's grants as the authorization server lists and revokes them (api/oauth/grants.ts); the
// operator tools revoke through the same function (admin/oauth.ts).

/** Revokes a grant and every token issued under it. Returns false when there was no live grant. */
export async function revokeGrant(grantId: string): Promise<boolean> {
  const revoked = await db().transaction(async (trx) => {
    const n = await trx('oauth_grants')
      .where({ id: grantId })
      .whereNull('revoked_at')
      .update({ revoked_at: new Date(), remembered: false });
    const families = await trx('oauth_token_families').where({ grant_id: grantId }).pluck('id');
    await revokeFamilies(trx, families as string[], 'grant_revoked');
    return n > 0;
  });
  await publishTokenInvalidation(`grant:${grantId}`);
  return revoked;
}

export async function userGrants(userId: string) {
  return db()('oauth_grants as g')
    .join('oauth_clients as c', 'c.id', 'g.client_id')
    .leftJoin('workspaces as w', 'w.id', 'g.workspace_id')
    .where('g.user_id', userId)
    .orderBy('g.created_at', 'desc')
    .select(
      'g.*',
      'c.client_name',
      'w.name as workspace_name',
      db()
        .raw(`(select count(*) from oauth_access_tokens t where t.family_id in (select id from oauth_token_families f where f.grant_id = g.id)
                  and t.revoked_at is null and t.expires_at > now())::int as active_access_tokens`),
    );
}
