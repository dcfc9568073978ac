import { getCanonicalHeaders, getCanonicalQuery } from '@smithy/signature-v4'
import type { HttpRequest } from '@smithy/types'
import { decodeComponent, parseQuery } from './query-string'
import { header, type SignedRequest } from './signed-request'

/** RFC 3986 encoding as SigV4 wants it: unreserved A-Za-z0-9-._~ kept, upper-case hex. */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
}

/**
 * The canonical URI. S3 (escape false): each segment of the path as received is decoded then
 * encoded once, with no dot-segment normalisation, so `/tfstate/env%3A/x` and `/tfstate/env:/x` both
 * give `/tfstate/env%3A/x` (the S3 page "Create a signed request" and its "Do not normalize URI
 * paths for S3"). Other services (escape true): empty and dot segments are resolved and the path as
 * received is encoded again, the "encode twice" of the SigV4 guide, as smithy's SignatureV4 does.
 */
export function canonicalPath(path: string, uriEscapePath: boolean): string {
  if (!uriEscapePath) {
    const canonical = path
      .split('/')
      .map((segment) => uriEncode(decodeComponent(segment)))
      .join('/')
    return canonical.startsWith('/') ? canonical : `/${canonical}`
  }
  const segments: string[] = []
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') segments.pop()
    else segments.push(segment)
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : ''
  return `/${segments.map(uriEncode).join('/')}${trailing}`
}

/**
 * The canonical request (AWS General Reference, "Create a canonical request for Signature Version
 * 4"), built from the request as received: only the headers the client named in SignedHeaders
 * (values trimmed and inner spaces collapsed by smithy's getCanonicalHeaders, which also signs
 * user-agent or expect when they are listed), the query re-encoded by smithy's getCanonicalQuery
 * (which leaves X-Amz-Signature out), and the payload hash as the client put it.
 *
 * SignatureV4.sign/presign themselves are not used: they add x-amz-date and x-amz-security-token,
 * drop `date`, and hoist x-amz-* headers into the query, so they would sign what smithy would send,
 * not what this client sent (a token added after signing, as in the suite's post-sts-header-after,
 * or a request dated by `Date`, would fail).
 */
export function canonicalRequest(
  request: SignedRequest,
  signedHeaders: readonly string[],
  payloadHash: string,
  uriEscapePath: boolean,
  /** The canonical URI to use instead of the one the rules give (the path as received). */
  path?: string,
): string {
  const headers: Record<string, string> = {}
  for (const name of signedHeaders) headers[name] = header(request, name) ?? ''
  const canonicalHeaders = getCanonicalHeaders(
    asHttpRequest(headers, {}),
    undefined,
    new Set(signedHeaders),
  )
  const names = [...signedHeaders].sort()
  return [
    request.method,
    path ?? canonicalPath(request.path, uriEscapePath),
    getCanonicalQuery(asHttpRequest({}, parseQuery(request.query))),
    ...names.map((name) => `${name}:${canonicalHeaders[name] ?? ''}`),
    '',
    names.join(';'),
    payloadHash,
  ].join('\n')
}

/** The smithy HttpRequest shape its helpers read (they look at headers or query only). */
function asHttpRequest(
  headers: Record<string, string>,
  query: Record<string, string | string[]>,
): HttpRequest {
  return { method: '', protocol: 'https:', hostname: '', path: '/', headers, query }
}
