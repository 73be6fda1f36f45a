// The protocol's routing table (docs/network-protocol.md, "Endpoints"), one module per area.

import type { Route, Routes } from './common';
import { engagementRoutes } from './engagement';
import { identityRoutes } from './identity';
import { imageRoutes } from './images';
import { oauthRoutes } from './oauth';
import { planningRoutes } from './planning';
import { postRoutes } from './posts';

export const protocolRoutes: Routes = {
  ...oauthRoutes,
  ...identityRoutes,
  ...postRoutes,
  ...imageRoutes,
  ...engagementRoutes,
  ...planningRoutes,
};

/** Maps a request path to a route; `/rest/posts/{urn}`, `/rest/socialMetadata/{urn}` and `/dms-uploads/{token}` carry a parameter. */
export function resolve(method: string, pathname: string): { route: Route; param: string | null } | { status: number } {
  let base = pathname;
  let param: string | null = null;
  const m = /^\/rest\/(posts|socialMetadata)\/([^/]+)$/.exec(pathname) ?? /^\/(dms-uploads)\/([^/]+)$/.exec(pathname);
  if (m) {
    base = m[1] === 'dms-uploads' ? '/dms-uploads' : `/rest/${m[1]}`;
    try {
      param = decodeURIComponent(m[2]!);
    } catch {
      return { status: 400 };
    }
  }
  const route = protocolRoutes[`${method} ${base}`];
  if (route) return { route, param };
  const known = Object.keys(protocolRoutes).some((k) => k.endsWith(` ${base}`));
  return { status: known ? 405 : 404 };
}
