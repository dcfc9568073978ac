/** A request as received: nothing decoded. */
export interface SignedRequest {
  method: string
  /** The path exactly as received on the wire, still percent-encoded, without the query. */
  path: string
  /** The raw query string as received, without '?', still percent-encoded ('' when none). */
  query: string
  /** Header names in lower case; repeated headers joined by ',' as Node/fetch do. */
  headers: Record<string, string>
}

/** A header's value, or undefined; `name` in lower case. */
export function header(request: SignedRequest, name: string): string | undefined {
  return Object.hasOwn(request.headers, name) ? request.headers[name] : undefined
}
