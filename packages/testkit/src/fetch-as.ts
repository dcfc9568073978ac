/**
 * `fetch` of `path` on a running server, sent with `Authorization: Bearer <bearer>`, or with no
 * credentials when `bearer` is null; headers in `init` are kept.
 */
export function fetchAs(
  server: { readonly url: string },
  path: string,
  bearer: string | null,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers)
  if (bearer !== null) headers.set('Authorization', `Bearer ${bearer}`)
  return fetch(`${server.url}${path}`, { ...init, headers })
}
