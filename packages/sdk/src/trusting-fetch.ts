import type { IncomingMessage } from 'node:http'
import type { Agent } from 'node:https'
import type { Readable as NodeReadable } from 'node:stream'
import { CairnError } from './errors'

/** Certificate authorities to trust: PEM text or its bytes (a file may hold several), or a list. */
export type CaCertificates = string | Uint8Array | readonly (string | Uint8Array)[]

/**
 * A `fetch` for Node.js that trusts the certificate authorities in `ca` as well as Node's own,
 * for a server whose certificate a private or self-signed CA issued.
 *
 * Why not the global fetch: Node's fetch (undici) reads extra CAs once, at start, from
 * NODE_EXTRA_CA_CERTS, and the undici `Agent` that would take them per client is not exported by
 * Node 20 (only by the `undici` package, a dependency this SDK does without). So HTTPS requests
 * go through `node:https` with an agent of their own, and come back as a web `Response`; bodies
 * stream both ways. `http:` URLs go to the global fetch. Redirects are returned, not followed
 * (the `/v1` API never redirects). Node's modules are loaded on the first request, so merely
 * importing the SDK elsewhere than Node costs nothing.
 *
 * @throws CairnError when `ca` holds no PEM certificate.
 */
export function fetchTrusting(ca: CaCertificates): typeof fetch {
  const pems = (
    Array.isArray(ca) ? (ca as (string | Uint8Array)[]) : [ca as string | Uint8Array]
  ).map((entry) => (typeof entry === 'string' ? entry : new TextDecoder().decode(entry)))
  if (!pems.some((pem) => pem.includes('-----BEGIN CERTIFICATE-----'))) {
    throw new CairnError('`ca` holds no PEM certificate (-----BEGIN CERTIFICATE-----)')
  }
  let agent: Promise<Agent> | undefined
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    if (!url.startsWith('https:')) return fetch(input, init)
    agent ??= agentTrusting(pems)
    return send(new Request(input, init), streamed(input, init), await agent)
  }
}

/**
 * The fetch a client uses: the one given, one that trusts `ca`, or the global one.
 * @internal
 */
export function fetchOf(options: { fetch?: typeof fetch; ca?: CaCertificates }): typeof fetch {
  if (options.ca === undefined) return options.fetch ?? fetch
  if (options.fetch !== undefined) {
    throw new CairnError(
      'give `ca` or `fetch`, not both: a fetch of your own decides which certificates it trusts',
    )
  }
  return fetchTrusting(options.ca)
}

/** Node's own CAs (with NODE_EXTRA_CA_CERTS where Node can say them) and the ones given. */
async function agentTrusting(pems: string[]): Promise<Agent> {
  const [https, tls] = await Promise.all([import('node:https'), import('node:tls')])
  // A `ca` list replaces Node's store rather than adding to it. Node 22.15 and later can list
  // what the store holds, extra certificates included; Node 20 only its bundled roots.
  const listing = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates
  const own = listing === undefined ? tls.rootCertificates : listing('default')
  return new https.Agent({ keepAlive: true, ca: [...own, ...pems] })
}

/** Whether the body is a stream to send as it is read (chunked), not bytes of known length. */
function streamed(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): boolean {
  const body: unknown = init?.body
  if (body === undefined) return input instanceof Request && input.body !== null
  return (
    body instanceof ReadableStream ||
    (typeof body === 'object' && body !== null && Symbol.asyncIterator in body)
  )
}

async function send(request: Request, stream: boolean, agent: Agent): Promise<Response> {
  const [{ request: httpsRequest }, { Readable }, { pipeline }] = await Promise.all([
    import('node:https'),
    import('node:stream'),
    import('node:stream/promises'),
  ])
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  let bytes: Uint8Array | undefined
  if (request.body !== null && !stream) {
    bytes = new Uint8Array(await request.arrayBuffer())
    headers['content-length'] = String(bytes.byteLength)
  } else if (request.body !== null && headers['content-length'] === undefined) {
    // Node chunks a body by default only for some methods (not DELETE); say so for all.
    headers['transfer-encoding'] = 'chunked'
  }
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      request.url,
      { method: request.method, headers, agent, signal: request.signal },
      (incoming) => {
        resolve(toResponse(incoming, request.method, Readable))
      },
    )
    outgoing.on('error', (error) => {
      // As the global fetch does: a TypeError whose cause says why (ECONNREFUSED, a TLS code).
      reject(
        request.signal.aborted
          ? (request.signal.reason as Error)
          : new TypeError('fetch failed', { cause: error }),
      )
    })
    if (request.body === null) outgoing.end()
    else if (bytes !== undefined) outgoing.end(bytes)
    else {
      const source = Readable.fromWeb(request.body)
      pipeline(source, outgoing).catch((error: unknown) => {
        outgoing.destroy(error as Error)
      })
    }
  })
}

function toResponse(
  incoming: IncomingMessage,
  method: string,
  readable: typeof NodeReadable,
): Response {
  const headers = new Headers()
  for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2) {
    headers.append(incoming.rawHeaders[index] as string, incoming.rawHeaders[index + 1] as string)
  }
  const status = incoming.statusCode ?? 502
  const empty = method === 'HEAD' || [204, 205, 304].includes(status)
  if (empty) incoming.resume()
  const body = empty ? null : (readable.toWeb(incoming) as ReadableStream<Uint8Array>)
  return new Response(body, { status, statusText: incoming.statusMessage ?? '', headers })
}
