import {
  ExchangedTokenSchema,
  TrustPolicyListSchema,
  TrustPolicySchema,
  type ExchangedToken,
  type TrustPolicyView,
} from '@cairn/contract'
import * as v from 'valibot'
import { CairnError } from './errors'
import type { Transport } from './transport'

/** A trust policy as set: what `TrustPolicyView` shows but `created` and `by`. */
export type TrustPolicy = Omit<TrustPolicyView, 'created' | 'by' | 'max_ttl'> & { max_ttl?: string }

/** The CI job's token was not exchanged: RFC 6749's `error` and its description. */
export class TokenExchangeError extends CairnError {
  readonly status: number
  readonly error: string

  constructor(status: number, error: string, description: string) {
    super(`the server refused the CI token (${String(status)} ${error}): ${description}`)
    this.name = 'TokenExchangeError'
    this.status = status
    this.error = error
  }
}

/**
 * `/v1/auth/trust-policies` (administrators, DESIGN section 17): which CI jobs may act on Cairn
 * with their platform's OIDC ID token; and the exchange a job makes at `/oauth/token`.
 */
export class TrustPoliciesApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  async list(): Promise<TrustPolicyView[]> {
    return (await this.#transport.json('GET', '/v1/auth/trust-policies', TrustPolicyListSchema))
      .policies
  }

  get(name: string): Promise<TrustPolicyView> {
    return this.#transport.json(
      'GET',
      `/v1/auth/trust-policies/${encodeURIComponent(name)}`,
      TrustPolicySchema,
    )
  }

  /** Makes the policy, or replaces the one of its name. */
  set(policy: TrustPolicy): Promise<TrustPolicyView> {
    return this.#transport.json('POST', '/v1/auth/trust-policies', TrustPolicySchema, {
      body: { json: policy },
    })
  }

  async remove(name: string): Promise<void> {
    await this.#transport.send('DELETE', `/v1/auth/trust-policies/${encodeURIComponent(name)}`)
  }

  /**
   * A CI job's OIDC ID token exchanged for a Cairn token (RFC 8693), under the first trust policy
   * it matches. No token of this client's is sent.
   *
   * @throws TokenExchangeError when the server refuses it
   */
  async exchange(idToken: string): Promise<ExchangedToken> {
    const response = await this.#transport.request('POST', '/oauth/token', {
      anonymous: true,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: {
        bytes: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
          subject_token: idToken,
        }).toString(),
      },
    })
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!response.ok) {
      const body = (parsed ?? {}) as { error?: unknown; error_description?: unknown }
      throw new TokenExchangeError(
        response.status,
        typeof body.error === 'string' ? body.error : 'unknown',
        typeof body.error_description === 'string' ? body.error_description : text.slice(0, 200),
      )
    }
    return v.parse(ExchangedTokenSchema, parsed)
  }
}
