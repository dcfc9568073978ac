import type { SendResult, WebhookSender } from '@cairn/core'

/** Short words for the network failures a receiver's operator can act on. */
const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
}

/**
 * Delivers webhooks with Node's fetch: redirects are not followed (a 3xx is a failed attempt), and
 * the request gives up after the delivery's timeout. The answer's body is not read.
 */
export const httpSender: WebhookSender = async (delivery): Promise<SendResult> => {
  try {
    const response = await fetch(delivery.url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(delivery.timeoutMs),
    })
    await response.body?.cancel().catch(() => undefined)
    return { status: response.status }
  } catch (error) {
    return { error: describe(error) }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return 'timeout'
  }
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  if (code !== undefined) return NETWORK_ERRORS[code] ?? code.toLowerCase()
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'timeout'
  return 'request failed'
}
