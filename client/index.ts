import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema';

// The typed client: openapi-fetch over the types generated from the OpenAPI document
// (client/schema.d.ts, `npm run client:generate`). Paths, parameters, bodies and responses are
// checked by the compiler against the published contract:
//
//   const api = apiClient('https://api.example.com', process.env.API_KEY!);
//   const { data, error } = await api.GET('/v1/posts/{postId}', { params: { path: { postId } } });

export type { components, operations, paths } from './schema';
export type ApiClient = Client<paths>;

export function apiClient(baseUrl: string, token?: string, options: Omit<ClientOptions, 'baseUrl'> = {}): ApiClient {
  return createClient<paths>({
    ...options,
    baseUrl,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(options.headers as Record<string, string> | undefined) },
  });
}
