import type { JWTPayload } from 'jose'
import { CiTokenVerifier, type Exchanged } from './ci-token-verifier'
import type { TrustPolicyStore } from './trust-policy-store'

/**
 * The claims of a CI token that say which job it was, as the audit trail keeps them: GitHub
 * Actions' and GitLab CI's documented names, and `sub`. Strings only, each at most 256 characters.
 */
const JOB_CLAIMS = [
  'sub',
  'repository',
  'ref',
  'environment',
  'workflow',
  'run_id',
  'run_attempt',
  'actor',
  'project_path',
  'pipeline_id',
  'job_id',
]

export function jobClaims(claims: JWTPayload): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const name of JOB_CLAIMS) {
    const value = claims[name]
    if (typeof value === 'string' || typeof value === 'number') {
      kept[name] = String(value).slice(0, 256)
    }
  }
  return kept
}

/**
 * A CI token for what a trust policy grants (RFC 8693's token exchange, DESIGN section 17): the
 * policies are read from the store for every exchange, so one set on any instance applies at
 * once on all.
 */
export class TrustExchange {
  readonly #policies: TrustPolicyStore
  readonly #verifier: CiTokenVerifier

  constructor(policies: TrustPolicyStore, verifier = new CiTokenVerifier()) {
    this.#policies = policies
    this.#verifier = verifier
  }

  /** @throws ExchangeRefusal */
  async exchange(subjectToken: string): Promise<Exchanged> {
    return this.#verifier.verify(subjectToken, await this.#policies.list())
  }
}
