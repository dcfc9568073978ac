import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  fetchAs,
  httpBackendConfig,
  startCiIssuer,
  TerraformWorkspace,
  useServer,
  type CiIssuer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * A CI job's OIDC ID token exchanged for a Cairn token under a trust policy (DESIGN section 17),
 * against the real server, then used by real Terraform on the `http` backend. There is no CI
 * platform here: a local issuer publishes discovery and a JWKS and mints tokens with the claims
 * GitHub Actions documents for its jobs' tokens.
 */

let issuer: CiIssuer
beforeAll(async () => {
  issuer = await startCiIssuer({ alg: 'ES256' })
})
afterAll(async () => {
  await issuer.close()
})

/** A GitHub Actions job's token for `repository` at `ref`. */
function jobToken(repository = 'acme/infra', ref = 'refs/heads/main'): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return issuer.mint({
    iss: issuer.url,
    aud: 'cairn',
    sub: `repo:${repository}:ref:${ref}`,
    repository,
    repository_owner: repository.split('/')[0],
    ref,
    run_id: '9000000001',
    workflow: 'deploy',
    iat: now - 5,
    nbf: now - 5,
    exp: now + 300,
  })
}

async function exchange(url: string, subjectToken: string) {
  const answer = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      subject_token: subjectToken,
    }),
  })
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> }
}

for (const rbac of [false, true]) {
  describe(`CI tokens for Cairn tokens, RBAC ${rbac ? 'on' : 'off'}`, () => {
    const server = useServer({ auth: true, args: rbac ? ['-rbac'] : [] })
    const admin = (path: string, init: RequestInit = {}) =>
      fetchAs(server, path, server.token, {
        ...init,
        headers: { 'Content-Type': 'application/json' },
      })

    it('sets a policy, exchanges a job token under it, and Terraform applies with the token alone', async () => {
      const policy = {
        name: 'github-main',
        issuer: issuer.url,
        audience: 'cairn',
        claims: { repository: 'acme/infra', ref: 'refs/heads/main' },
        role: 'writer',
        scope: 'team/*',
        max_ttl: '15m',
      }
      const set = await admin('/v1/auth/trust-policies', {
        method: 'POST',
        body: JSON.stringify(policy),
      })
      expect(set.status, await set.clone().text()).toBe(201)
      // A policy that names no job, or an unknown role, is refused and not kept.
      const open = await admin('/v1/auth/trust-policies', {
        method: 'POST',
        body: JSON.stringify({ ...policy, name: 'open', claims: {} }),
      })
      expect(open.status).toBe(400)
      expect(await open.text()).toContain('would trust every job of the platform')
      const unknownRole = await admin('/v1/auth/trust-policies', {
        method: 'POST',
        body: JSON.stringify({ ...policy, name: 'nobody', role: 'no-such-role' }),
      })
      expect(unknownRole.status).toBe(404)
      const listed = (await (await admin('/v1/auth/trust-policies')).json()) as {
        policies: { name: string; by: string }[]
      }
      expect(listed.policies.map((each) => each.name)).toEqual(['github-main'])

      const exchanged = await exchange(server.url, await jobToken())
      expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200)
      expect(exchanged.body).toMatchObject({
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
      })
      expect(exchanged.body['expires_in']).toBeLessThanOrEqual(300)
      const token = exchanged.body['access_token'] as string

      const tf = await TerraformWorkspace.create()
      try {
        await tf.write('main.tf', httpBackendConfig(`${server.url}/v1/backend/team/ci-app`, 'v1'))
        const env = { TF_HTTP_USERNAME: 'ci', TF_HTTP_PASSWORD: token }
        expect((await tf.run(['init', '-input=false'], { env })).code).toBe(0)
        const applied = await tf.run(['apply', '-auto-approve', '-input=false'], { env })
        expect(applied.code, applied.stderr).toBe(0)
      } finally {
        await tf.dispose()
      }
      // Within the policy's scope only, and never more than its role.
      const as = (path: string, init: RequestInit = {}) => fetchAs(server, path, token, init)
      expect((await as('/v1/units/team/ci-app')).status).toBe(200)
      const outside = await as('/v1/units', {
        method: 'POST',
        body: JSON.stringify({ id: 'prod/db' }),
      })
      expect(outside.status).toBe(403)
      expect((await as('/v1/units/team/ci-app', { method: 'DELETE' })).status).toBe(403)
      // The same principal gets S3 credentials.
      expect((await as('/v1/auth/issue-s3-creds', { method: 'POST' })).status).toBe(200)
      const me = (await (await as('/v1/auth/me')).json()) as Record<string, unknown>
      expect(me).toMatchObject({
        subject: 'policy:github-main',
        issuer: 'urn:cairn:trust-policy',
        token: {
          kind: 'api_token',
          limit: { role: 'writer', scope: 'team/*' },
          ci: { repository: 'acme/infra', ref: 'refs/heads/main', run_id: '9000000001' },
        },
      })
      // What the job's token wrote is recorded with the job.
      const writes = (await (
        await admin('/v1/audit?action=state.write&unit=team/ci-app')
      ).json()) as {
        records: { principal: { subject: string }; detail: Record<string, string> }[]
      }
      expect(writes.records[0]).toMatchObject({
        principal: { subject: 'policy:github-main' },
        detail: { ci_repository: 'acme/infra', ci_ref: 'refs/heads/main', ci_run_id: '9000000001' },
      })
      // The audit trail names the policy and the job.
      const audit = (await (await admin('/v1/audit?action=login')).json()) as {
        records: { detail: Record<string, string> }[]
      }
      expect(audit.records.map((record) => record.detail)).toContainEqual(
        expect.objectContaining({
          via: 'ci',
          policy: 'github-main',
          repository: 'acme/infra',
          ref: 'refs/heads/main',
          run_id: '9000000001',
        }),
      )
    })

    it.runIf(!rbac)(
      'waits a bounded time for an issuer that never answers, refuses for now, and serves the rest meanwhile',
      async () => {
        // A host that takes the connection and says nothing.
        const silent = createServer(() => undefined)
        await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening))
        const silentUrl = `http://127.0.0.1:${String((silent.address() as AddressInfo).port)}`
        try {
          const set = await admin('/v1/auth/trust-policies', {
            method: 'POST',
            body: JSON.stringify({
              name: 'silent',
              issuer: silentUrl,
              audience: 'cairn',
              claims: { repository: 'acme/infra' },
              role: 'reader',
              scope: '*',
            }),
          })
          expect(set.status).toBe(201)
          const now = Math.floor(Date.now() / 1000)
          const started = Date.now()
          const waiting = exchange(
            server.url,
            await issuer.mint({
              iss: silentUrl,
              aud: 'cairn',
              repository: 'acme/infra',
              iat: now,
              exp: now + 60,
            }),
          )
          // Meanwhile the server answers everything else at once.
          const health = await fetch(`${server.url}/healthz`)
          expect(health.status).toBe(200)
          expect(Date.now() - started).toBeLessThan(2000)
          const refused = await waiting
          expect(refused.status).toBe(503)
          expect(refused.body['error']).toBe('temporarily_unavailable')
          expect(Date.now() - started).toBeLessThan(9000)
        } finally {
          silent.closeAllConnections()
          await new Promise((closed) => silent.close(closed))
          await admin('/v1/auth/trust-policies/silent', { method: 'DELETE' })
        }
      },
      20_000,
    )

    it('refuses another repository or branch with 401, logging why and never the token', async () => {
      for (const [repository, ref] of [
        ['evil/infra', 'refs/heads/main'],
        ['acme/infra', 'refs/heads/feature'],
      ] as const) {
        const refusedToken = await jobToken(repository, ref)
        const refused = await exchange(server.url, refusedToken)
        expect(refused.status).toBe(401)
        expect(refused.body['error']).toBe('invalid_grant')
        expect(server.output()).not.toContain(refusedToken)
      }
      expect(server.output()).toMatch(/a CI token was refused.*closest_policy.*github-main/)
      const bad = await exchange(server.url, 'not-a-jwt')
      expect(bad.status).toBe(400)
      expect(bad.body['error']).toBe('invalid_request')
    })
  })
}
