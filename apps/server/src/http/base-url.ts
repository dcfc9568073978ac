/**
 * The server's public base URL for a request (service spec, Configuration): `SVC_PUBLIC_BASE_URL`
 * when set; otherwise what a load balancer says in `X-Forwarded-Proto` and `X-Forwarded-Host`;
 * otherwise the request's own scheme and Host.
 */
export function publicBaseUrl(request: Request, configured: string | undefined): string {
  if (configured !== undefined) return configured
  const url = new URL(request.url)
  const proto = first(request.headers.get('x-forwarded-proto'))
  const host = first(request.headers.get('x-forwarded-host'))
  const scheme = proto === 'http' || proto === 'https' ? proto : url.protocol.slice(0, -1)
  return `${scheme}://${host !== undefined && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? host : url.host}`
}

function first(value: string | null): string | undefined {
  const item = value?.split(',')[0]?.trim()
  return item === undefined || item === '' ? undefined : item
}
