import { lookup as dnsLookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIPv6, type LookupFunction } from 'node:net'
import {
  targetHost,
  type HostResolver,
  type OutgoingDelivery,
  type SendResult,
  type TargetRefusal,
  type WebhookSender,
  type WebhookTargets,
} from '@cairn/webhooks'

/** The system's resolver (`getaddrinfo`, /etc/hosts included): every address of a name. */
export const systemResolver: HostResolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map(({ address }) => address)

export interface HttpSenderOptions {
  /** Where deliveries may go; checked at every attempt. */
  targets: WebhookTargets
  /** Resolves a receiver's name once per attempt; the system's resolver unless given (tests). */
  resolve?: HostResolver
}

/**
 * Delivers webhooks over node's http and https clients, never following a redirect (a 3xx is a
 * failed attempt), giving up after the delivery's timeout, and reading none of the answer's body.
 *
 * Each attempt checks its target where it connects (DESIGN section 13): an address in the URL is
 * checked before anything is sent; a name is resolved once, through the request's `lookup`, every
 * address it resolves to is checked, and the connection goes to those checked addresses only. The
 * request keeps the name for its Host header and TLS server name. So a name that resolved to a
 * public address when the subscription was made and to 127.0.0.1 now (DNS rebinding) is refused.
 *
 * Failures are coarse (`connection_failed`, `timeout`, `target_refused`), as the deliveries
 * listing shows them; the cause (`ECONNREFUSED`, the address refused) is the log's alone.
 */
export function createHttpSender(options: HttpSenderOptions): WebhookSender {
  const resolve = options.resolve ?? systemResolver
  return (delivery) => send(delivery, options.targets, resolve)
}

function send(
  delivery: OutgoingDelivery,
  targets: WebhookTargets,
  resolve: HostResolver,
): Promise<SendResult> {
  const url = new URL(delivery.url)
  const host = targetHost(url)
  const refused = targets.refuseHost(host)
  if (refused !== undefined) return Promise.resolve(refusedResult(refused))
  let refusal: TargetRefusal | undefined
  const lookup: LookupFunction = (hostname, options, callback) => {
    void resolve(hostname).then(
      (addresses) => {
        refusal = addresses
          .map((address) => targets.refuseAddress(host, address))
          .find((found) => found !== undefined)
        const wanted = addresses
          .map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }))
          .filter(({ family }) =>
            options.family !== 4 && options.family !== 6 ? true : family === options.family,
          )
        const first = wanted[0]
        if (refusal !== undefined || first === undefined) {
          const code = refusal === undefined ? 'ENOTFOUND' : 'EREFUSEDTARGET'
          callback(Object.assign(new Error(`${code} ${hostname}`), { code }), '', 0)
        } else if (options.all === true) callback(null, wanted)
        else callback(null, first.address, first.family)
      },
      (error: unknown) => {
        callback(error as NodeJS.ErrnoException, '', 0)
      },
    )
  }
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((done) => {
    const outgoing = request(url, {
      method: 'POST',
      headers: { ...delivery.headers, 'content-length': String(delivery.body.byteLength) },
      lookup,
      // A connection of its own: one from a pool may have been opened to another address.
      agent: false,
      signal: AbortSignal.timeout(delivery.timeoutMs),
    })
    outgoing.on('response', (response: IncomingMessage) => {
      done({ status: response.statusCode ?? 0 })
      response.destroy()
    })
    outgoing.on('error', (error) => {
      done(refusal === undefined ? failedResult(error) : refusedResult(refusal))
    })
    outgoing.end(delivery.body)
  })
}

function refusedResult(refusal: TargetRefusal): SendResult {
  const where =
    refusal.address === undefined ? refusal.host : `${refusal.host} (${refusal.address})`
  return { error: 'target_refused', detail: `${where} is a ${refusal.kind} address` }
}

function failedResult(error: Error): SendResult {
  const code = (error as NodeJS.ErrnoException).code
  if (error.name === 'AbortError' || error.name === 'TimeoutError') {
    return { error: 'timeout', detail: code ?? error.name }
  }
  return { error: 'connection_failed', detail: code ?? error.message }
}
