import { InvalidRequestError, parseScope } from '@cairn/core'

/**
 * A trust policy (DESIGN section 17): which CI jobs may act on Cairn without a stored secret. A
 * job's OIDC ID token whose issuer and audience are the policy's and whose claims all match its
 * conditions is exchanged for a Cairn token limited to the policy's role and scope, living at most
 * `max_ttl` and never longer than the job's own token.
 */
export interface TrustPolicy {
  /** `[a-z0-9][a-z0-9_-]*`, at most 64: the principal is `policy:<name>`. */
  name: string
  /** The CI platform's issuer, as its tokens' `iss` says it (`https://token.actions.githubusercontent.com`). */
  issuer: string
  /** The audience the job asks its token for (`aud` must hold it). */
  audience: string
  /** Claim conditions, every one must hold: an exact value, or a glob (`*` any run, `?` one character). */
  claims: Record<string, string>
  /** The role granted (a built-in or custom role). */
  role: string
  /** Where: `*`, `<prefix>/*` or a unit ID. */
  scope: string
  /** The longest a token exchanged under it lives, as a Go duration (`15m`, `1h`); at most 12h. */
  max_ttl: string
}

/** The longest `max_ttl` a policy may give. */
export const MAX_POLICY_TTL_MS = 12 * 3_600_000
/** The shortest. */
const MIN_POLICY_TTL_MS = 60_000
/** Conditions a policy may hold, and the longest pattern of one. */
const MAX_CONDITIONS = 32
const MAX_PATTERN_CHARS = 512

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/
const CLAIM = /^[A-Za-z0-9_.:-]{1,128}$/

/**
 * Claims that do not say which job a token is for: a policy whose conditions are only these would
 * trust every job of the platform, and is refused as one with none is.
 */
const NOT_IDENTIFYING = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti'])

/**
 * A policy as given, checked. Refused with a sentence naming the field: a policy with no claim
 * conditions (or only ones that name no job), because it would trust every job of the platform.
 *
 * @throws InvalidRequestError
 */
export function parseTrustPolicy(input: unknown): TrustPolicy {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidRequestError('a trust policy is a JSON object')
  }
  const given = input as Record<string, unknown>
  const known = new Set(['name', 'issuer', 'audience', 'claims', 'role', 'scope', 'max_ttl'])
  for (const field of Object.keys(given)) {
    if (!known.has(field))
      throw new InvalidRequestError(`a trust policy has no field ${JSON.stringify(field)}`)
  }
  const name = text(given, 'name')
  if (!NAME.test(name)) {
    throw new InvalidRequestError('name must be lower-case letters, digits, - and _, at most 64')
  }
  const issuer = parseIssuer(text(given, 'issuer'))
  const audience = text(given, 'audience')
  const claims = parseConditions(given['claims'])
  const role = text(given, 'role')
  const scope = parseScope(given['scope'])
  const maxTtl = given['max_ttl'] === undefined ? '1h' : text(given, 'max_ttl')
  ttlOf(maxTtl)
  return { name, issuer, audience, claims, role, scope, max_ttl: maxTtl }
}

/** A policy's `max_ttl` in milliseconds. @throws InvalidRequestError */
export function ttlOf(duration: string): number {
  const match = /^(?:(\d{1,3})h)?(?:(\d{1,4})m)?(?:(\d{1,6})s)?$/.exec(duration)
  const ms =
    match === null || duration === ''
      ? Number.NaN
      : (Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0)) * 1000
  if (!(ms >= MIN_POLICY_TTL_MS && ms <= MAX_POLICY_TTL_MS)) {
    throw new InvalidRequestError('max_ttl must be a duration from 1m to 12h, such as 15m or 1h')
  }
  return ms
}

/**
 * Whether every condition of `policy` holds for `claims`, and how many do (to name the closest
 * policy when none matches). A claim that is not a string, number or boolean never matches.
 */
export function conditionsMet(
  policy: Pick<TrustPolicy, 'claims'>,
  claims: Record<string, unknown>,
): { all: boolean; met: number; failed: string[] } {
  let met = 0
  const failed: string[] = []
  for (const [claim, pattern] of Object.entries(policy.claims)) {
    const value = claims[claim]
    const shown =
      typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : undefined
    if (shown !== undefined && globMatches(pattern, shown)) met += 1
    else failed.push(claim)
  }
  return { all: failed.length === 0, met, failed }
}

/** `pattern` against all of `value`: `*` any run of characters (`/` too), `?` one, the rest as is. */
export function globMatches(pattern: string, value: string): boolean {
  let source = '^'
  for (const character of pattern) {
    source +=
      character === '*'
        ? '[\\s\\S]*'
        : character === '?'
          ? '[\\s\\S]'
          : character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`${source}$`, 'u').test(value)
}

function text(given: Record<string, unknown>, field: string): string {
  const value = given[field]
  if (typeof value !== 'string' || value === '' || value.length > 2048) {
    throw new InvalidRequestError(`${field} must be a non-empty string`)
  }
  return value
}

/**
 * An issuer URL: https, or http on a loopback host (a local issuer, as tests run). No query or
 * fragment, as OpenID Connect Discovery requires.
 */
function parseIssuer(given: string): string {
  let url: URL
  try {
    url = new URL(given)
  } catch {
    throw new InvalidRequestError('issuer must be a URL')
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) {
    throw new InvalidRequestError('issuer must be an https URL (http only on a loopback host)')
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new InvalidRequestError('issuer must have no query, fragment or credentials')
  }
  return given
}

function parseConditions(given: unknown): Record<string, string> {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new InvalidRequestError('claims must be an object of claim names to values or globs')
  }
  const entries = Object.entries(given as Record<string, unknown>)
  const identifying = entries.filter(([claim]) => !NOT_IDENTIFYING.has(claim))
  if (identifying.length === 0) {
    throw new InvalidRequestError(
      'claims must name at least one claim that says which job a token is for (repository, ref, project_path, ...): without one the policy would trust every job of the platform',
    )
  }
  if (entries.length > MAX_CONDITIONS) {
    throw new InvalidRequestError(`claims may hold at most ${String(MAX_CONDITIONS)} conditions`)
  }
  const conditions: Record<string, string> = {}
  for (const [claim, pattern] of entries) {
    if (!CLAIM.test(claim))
      throw new InvalidRequestError(
        `claim name ${JSON.stringify(claim.slice(0, 200))} is not one a token carries`,
      )
    if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_PATTERN_CHARS) {
      throw new InvalidRequestError(`claims.${claim} must be a non-empty value or glob`)
    }
    if (/^\*+$/.test(pattern)) {
      throw new InvalidRequestError(
        `claims.${claim} must not match everything: name the value, or leave the claim out`,
      )
    }
    conditions[claim] = pattern
  }
  return conditions
}
