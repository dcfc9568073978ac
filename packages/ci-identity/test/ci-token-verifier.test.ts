import { InvalidRequestError } from '@cairn/core'
import { startCiIssuer, type CiIssuer } from '@cairn/testkit'
import { generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CiTokenVerifier, ExchangeRefusal } from '../src/ci-token-verifier'
import { globMatches, parseTrustPolicy, type TrustPolicy } from '../src/trust-policy'

/**
 * CI tokens against trust policies, from a local issuer that publishes a discovery document and a
 * JWKS and mints tokens shaped like GitHub Actions' and GitLab CI's (their documented claims).
 * There is no CI platform here: the issuer stands in for one.
 */

let issuer: CiIssuer
beforeAll(async () => {
  issuer = await startCiIssuer()
})
afterAll(async () => {
  await issuer.close()
})

const now = () => Math.floor(Date.now() / 1000)

/** The claims of a GitHub Actions job's ID token (docs: "About security hardening with OpenID Connect"). */
function github(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: issuer.url,
    aud: 'cairn',
    sub: 'repo:acme/infra:ref:refs/heads/main',
    repository: 'acme/infra',
    repository_owner: 'acme',
    ref: 'refs/heads/main',
    ref_type: 'branch',
    environment: 'production',
    workflow: 'deploy',
    run_id: '9000000001',
    run_attempt: '1',
    actor: 'octocat',
    event_name: 'push',
    iat: now() - 10,
    nbf: now() - 10,
    exp: now() + 300,
    jti: 'job-1',
    ...overrides,
  }
}

/** The claims of a GitLab CI job's `id_tokens` (docs: "OpenID Connect (OIDC) Authentication Using ID Tokens"). */
function gitlab(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: issuer.url,
    aud: 'https://cairn.example.com',
    sub: 'project_path:acme/infra:ref_type:branch:ref:main',
    namespace_path: 'acme',
    project_path: 'acme/infra',
    project_id: '42',
    ref: 'main',
    ref_type: 'branch',
    ref_protected: 'true',
    pipeline_id: '1234',
    job_id: '5678',
    environment: 'production',
    iat: now() - 10,
    nbf: now() - 10,
    exp: now() + 300,
    ...overrides,
  }
}

function policies(): TrustPolicy[] {
  return [
    parseTrustPolicy({
      name: 'github-main',
      issuer: issuer.url,
      audience: 'cairn',
      claims: { repository: 'acme/infra', ref: 'refs/heads/main' },
      role: 'writer',
      scope: 'team/*',
      max_ttl: '15m',
    }),
    parseTrustPolicy({
      name: 'gitlab-protected',
      issuer: issuer.url,
      audience: 'https://cairn.example.com',
      claims: { project_path: 'acme/*', ref_protected: 'true' },
      role: 'reader',
      scope: '*',
    }),
  ]
}

async function refusal(token: string, given = policies(), verifier = new CiTokenVerifier()) {
  try {
    await verifier.verify(token, given)
  } catch (error) {
    if (error instanceof ExchangeRefusal) return error
    throw error
  }
  throw new Error('the token was accepted')
}

describe('a CI token against trust policies', () => {
  it('earns the policy whose audience and conditions hold, for the shorter of the two lifetimes', async () => {
    const verifier = new CiTokenVerifier()
    const fromGithub = await verifier.verify(await issuer.mint(github()), policies())
    expect(fromGithub.policy.name).toBe('github-main')
    expect(fromGithub.claims['repository']).toBe('acme/infra')
    // The job's token ends in 5 minutes, before the policy's 15.
    expect(fromGithub.expires).toBeLessThanOrEqual((now() + 300) * 1000)
    const longJob = await verifier.verify(
      await issuer.mint(github({ exp: now() + 3000 })),
      policies(),
    )
    expect(longJob.expires - Date.now()).toBeLessThanOrEqual(15 * 60_000)
    expect(longJob.expires - Date.now()).toBeGreaterThan(14 * 60_000)
    const fromGitlab = await verifier.verify(await issuer.mint(gitlab()), policies())
    expect(fromGitlab.policy.name).toBe('gitlab-protected')
  })

  it.each([
    [
      'another repository',
      () => github({ repository: 'evil/infra' }),
      /closest: github-main \(failed: repository\)/,
    ],
    ['another branch', () => github({ ref: 'refs/heads/feature' }), /failed: ref/],
    ['the wrong audience', () => github({ aud: 'someone-else' }), /matches no trust policy/],
    [
      'an unprotected GitLab ref',
      () => gitlab({ ref_protected: 'false' }),
      /closest: gitlab-protected \(failed: ref_protected\)/,
    ],
    ['an expired token', () => github({ exp: now() - 120 }), /expired/],
    ['a token not valid yet', () => github({ nbf: now() + 600 }), /nbf/],
    ['a token older than an hour', () => github({ iat: now() - 7200, exp: now() + 300 }), /iat/],
    [
      'an issuer no policy names',
      () => github({ iss: 'https://token.example.net' }),
      /no trust policy names the issuer/,
    ],
  ])('refuses %s, saying which check failed', async (_label, claims, reason) => {
    const refused = await refusal(await issuer.mint(claims()))
    expect(refused.error).toBe('invalid_grant')
    expect(refused.reason).toMatch(reason)
  })

  it('refuses alg none, an HS256 token signed with the public key, a kid not in the JWKS, and a key of its own', async () => {
    const unsigned = [
      Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url'),
      Buffer.from(JSON.stringify(github())).toString('base64url'),
      '',
    ].join('.')
    expect((await refusal(unsigned)).reason).toMatch(
      /signed with none, not an asymmetric algorithm/,
    )
    // The classic confusion: the issuer's public key used as an HMAC secret.
    const publicAsSecret = new TextEncoder().encode(JSON.stringify(issuer.publicJwk))
    const confused = await new SignJWT(github())
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(publicAsSecret)
    expect((await refusal(confused)).reason).toMatch(/signed with HS256/)
    expect((await refusal(await issuer.mint(github(), { kid: 'not-in-the-jwks' }))).reason).toMatch(
      /kid not found/,
    )
    const { privateKey: stranger } = await generateKeyPair('RS256')
    expect((await refusal(await issuer.mint(github(), { key: stranger }))).reason).toMatch(
      /signature does not verify/,
    )
    expect((await refusal('not a jwt')).error).toBe('invalid_request')
  })

  it('waits a bounded time for an issuer whose JWKS is slow or down, then refuses for now', async () => {
    const token = await issuer.mint(github())
    issuer.delayJwks(2000)
    try {
      const started = Date.now()
      const slow = await refusal(token, policies(), new CiTokenVerifier({ timeoutMs: 300 }))
      expect(slow.error).toBe('temporarily_unavailable')
      expect(Date.now() - started).toBeLessThan(1500)
      issuer.delayJwks(-1)
      const down = await refusal(token, policies(), new CiTokenVerifier({ timeoutMs: 300 }))
      expect(down.error).toBe('temporarily_unavailable')
    } finally {
      issuer.delayJwks(0)
    }
    // Back up, the next exchange asks again.
    expect((await new CiTokenVerifier().verify(token, policies())).policy.name).toBe('github-main')
  })
})

describe('a trust policy', () => {
  const base = {
    name: 'p',
    issuer: 'https://token.actions.githubusercontent.com',
    audience: 'cairn',
    claims: { repository: 'acme/infra' },
    role: 'writer',
    scope: 'team/*',
  }

  it('is refused with no condition that names a job: it would trust every job of the platform', () => {
    for (const claims of [{}, { aud: 'cairn' }, { iss: 'x', exp: '1' }]) {
      expect(() => parseTrustPolicy({ ...base, claims })).toThrow(/would trust every job/)
    }
    expect(() => parseTrustPolicy({ ...base, claims: { repository: '*' } })).toThrow(
      /must not match everything/,
    )
  })

  it.each([
    [{ name: 'Has Spaces' }, /name must be/],
    [{ issuer: 'http://token.example.com' }, /https URL/],
    [{ issuer: 'https://token.example.com?x=1' }, /no query/],
    [{ scope: 'bad scope/' }, /scope/],
    [{ max_ttl: '13h' }, /from 1m to 12h/],
    [{ max_ttl: '30s' }, /from 1m to 12h/],
    [{ extra: 1 }, /no field "extra"/],
  ])('refuses %j', (change, message) => {
    expect(() => parseTrustPolicy({ ...base, ...change })).toThrow(InvalidRequestError)
    expect(() => parseTrustPolicy({ ...base, ...change })).toThrow(message)
  })

  it('matches globs against the whole value', () => {
    expect(globMatches('acme/*', 'acme/infra')).toBe(true)
    expect(globMatches('acme/*', 'acme-evil/infra')).toBe(false)
    expect(globMatches('refs/heads/release-?', 'refs/heads/release-1')).toBe(true)
    expect(globMatches('refs/heads/main', 'refs/heads/main2')).toBe(false)
    expect(globMatches('a.b', 'axb')).toBe(false)
  })
})
