import { WebhookTargetRefusedError } from '@cairn/core'
import {
  allowsAddress,
  allowsName,
  NO_ALLOWED_HOSTS,
  targetHost,
  type AllowedHosts,
} from './allowed-hosts'
import { parseIp } from './ip-address'
import { addressKind, type AddressKind } from './special-addresses'

/** Resolves a host name to its addresses, as text (`dns.lookup` with `all`); core makes no calls. */
export type HostResolver = (host: string) => Promise<readonly string[]>

/** Why a target is refused: its host, what the address is, and the address when it was resolved. */
export interface TargetRefusal {
  host: string
  kind: AddressKind
  /** The address a name resolved to; absent when the host itself is the address or a loopback name. */
  address?: string
}

export interface WebhookTargetsOptions {
  allowed?: AllowedHosts
  /** Resolves names when a subscription is made; without it only the URL's host is checked then. */
  resolve?: HostResolver
  /** How long a subscription waits for its host to resolve (5 s). */
  resolveTimeoutMs?: number
}

const DEFAULT_RESOLVE_TIMEOUT_MS = 5000

/**
 * Where webhooks may go (DESIGN section 13): nowhere that is loopback, private, link-local,
 * unspecified, multicast, broadcast, documentation, reserved or a cloud's metadata service, unless
 * the allow-list names the host or the address. A subscription's URL is checked when it is made;
 * the server's sender checks again at every delivery, after resolving the name, and connects to
 * the address it checked, so a name that resolves elsewhere later (DNS rebinding) gains nothing.
 */
export class WebhookTargets {
  readonly #allowed: AllowedHosts
  readonly #resolve: HostResolver | undefined
  readonly #resolveTimeoutMs: number

  constructor(options: WebhookTargetsOptions = {}) {
    this.#allowed = options.allowed ?? NO_ALLOWED_HOSTS
    this.#resolve = options.resolve
    this.#resolveTimeoutMs = options.resolveTimeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS
  }

  /** Whether the allow-list names this host, so that its addresses are not checked. */
  allowsName(host: string): boolean {
    return allowsName(this.#allowed, host)
  }

  /**
   * The refusal the host earns by itself (as `targetHost` gives it): an address that is not
   * allowed, or `localhost` and the names under it (RFC 6761 section 6.3), which are loopback
   * whatever a resolver says. Undefined for an allowed host and for any other name, whose
   * addresses decide.
   */
  refuseHost(host: string): TargetRefusal | undefined {
    if (this.allowsName(host)) return undefined
    const ip = parseIp(host)
    if (ip === undefined) {
      return host === 'localhost' || host.endsWith('.localhost')
        ? { host, kind: 'loopback' }
        : undefined
    }
    const kind = addressKind(ip)
    return kind === undefined || allowsAddress(this.#allowed, ip) ? undefined : { host, kind }
  }

  /** The refusal an address that `host` resolved to earns, unless the allow-list names either. */
  refuseAddress(host: string, address: string): TargetRefusal | undefined {
    if (this.allowsName(host)) return undefined
    const ip = parseIp(address)
    // A resolver's answer that is no address is refused rather than passed on to connect.
    if (ip === undefined) return { host, kind: 'reserved', address }
    const kind = addressKind(ip)
    return kind === undefined || allowsAddress(this.#allowed, ip)
      ? undefined
      : { host, kind, address }
  }

  /**
   * Checks a subscription's URL before it is stored: its host, then, with a resolver, every
   * address the name resolves to now. A name that does not resolve (yet) is accepted: each
   * delivery resolves and checks it again.
   *
   * @throws WebhookTargetRefusedError
   */
  async check(url: string): Promise<void> {
    const host = targetHost(new URL(url))
    const refusal = this.refuseHost(host) ?? (await this.#refuseResolved(host))
    if (refusal !== undefined) throw refusedError(refusal)
  }

  async #refuseResolved(host: string): Promise<TargetRefusal | undefined> {
    if (this.#resolve === undefined || parseIp(host) !== undefined || this.allowsName(host)) {
      return undefined
    }
    const addresses = await withTimeout(this.#resolve(host), this.#resolveTimeoutMs)
    for (const address of addresses ?? []) {
      const refusal = this.refuseAddress(host, address)
      if (refusal !== undefined) return refusal
    }
    return undefined
  }
}

/** The error a refused target gets: it names the setting that would allow it. */
export function refusedError(refusal: TargetRefusal): WebhookTargetRefusedError {
  const { host, kind } = refusal
  const article = /^[aeiou]/.test(kind) ? 'an' : 'a'
  const what =
    refusal.address !== undefined
      ? `resolves to ${article} ${kind} address`
      : parseIp(host) === undefined
        ? `names ${article} ${kind} address`
        : `is ${article} ${kind} address`
  return new WebhookTargetRefusedError(
    host,
    `the webhook URL's host ${host} ${what}: webhooks may not reach loopback, private, link-local, reserved or cloud metadata addresses unless the server's -webhook-allowed-hosts (SVC_WEBHOOK_ALLOWED_HOSTS) names the host or its address`,
  )
}

/** The promise's value, or undefined when it fails or takes longer than `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined)
    }, ms)
  })
  try {
    return await Promise.race([promise.catch(() => undefined), late])
  } finally {
    clearTimeout(timer)
  }
}
