import { isIP } from 'node:net';
import { refusedClass } from './addresses';

// Checks made when an endpoint URL is written. They catch the obvious mistakes early; they are
// not the security boundary: a hostname can resolve anywhere later, so every delivery attempt
// resolves and checks again (lib/webhooks/send.ts).

export const MAX_URL_LENGTH = 2048;

export interface UrlPolicy {
  allowHttp: boolean;
  allowLoopback: boolean;
}

/** null when acceptable, else a sentence saying what is wrong. */
export function receiverUrlProblem(raw: string, policy: UrlPolicy): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters.`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as https://example.com/webhooks.';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp ? 'must use https or http.' : 'must use https.';
  }
  // The signature is the receiver's proof of origin; credentials in the URL would be listed back.
  if (url.username || url.password) return 'must not contain credentials.';
  if (url.hash) return 'must not contain a fragment.';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const refused = refusedClass(host, { allowLoopback: policy.allowLoopback });
    if (refused) return `points at a ${refused.replace('_', '-')} address, which webhooks never reach.`;
  } else {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (!name.includes('.') && name !== 'localhost') return 'must name a fully qualified host.';
    if ((name === 'localhost' || name.endsWith('.localhost')) && !policy.allowLoopback)
      return 'points at the local host, which webhooks never reach.';
  }
  return null;
}
