import { describe, expect, it } from 'vitest'
import { alice, PROVIDER, setup } from '../test/fixtures'
import { AuthError, TokenVerificationError } from './errors'
import type { Identity } from './identity'

describe('the auth service', () => {
  describe('refresh tokens', () => {
    it('rotates: each refresh returns a new access token and a new refresh token', async () => {
      const { auth } = await setup()
      const first = await auth.issueFor(alice)
      const second = await auth.refresh(first.refresh_token)
      expect(second.refresh_token).not.toBe(first.refresh_token)
      expect(second).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
      expect(await auth.authenticate(second.access_token)).toMatchObject(alice)
    })

    it('refuses a superseded refresh token and then revokes the whole family', async () => {
      const { auth } = await setup()
      const first = await auth.issueFor(alice)
      const second = await auth.refresh(first.refresh_token)
      await expect(auth.refresh(first.refresh_token)).rejects.toBeInstanceOf(TokenVerificationError)
      // The family is gone: even the newest token of it no longer works.
      await expect(auth.refresh(second.refresh_token)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
    })

    it('keeps other families working when one is revoked', async () => {
      const { auth } = await setup()
      const laptop = await auth.issueFor(alice)
      const desktop = await auth.issueFor(alice)
      await auth.refresh(laptop.refresh_token)
      await expect(auth.refresh(laptop.refresh_token)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
      expect((await auth.refresh(desktop.refresh_token)).token_type).toBe('Bearer')
    })

    it('lets exactly one of two concurrent uses of the same refresh token through', async () => {
      const { auth } = await setup()
      const first = await auth.issueFor(alice)
      const results = await Promise.allSettled([
        auth.refresh(first.refresh_token),
        auth.refresh(first.refresh_token),
      ])
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
    })

    it('refuses an expired refresh token', async () => {
      const { auth, clock } = await setup()
      const first = await auth.issueFor(alice)
      clock.advance(721 * 3_600_000)
      await expect(auth.refresh(first.refresh_token)).rejects.toBeInstanceOf(TokenVerificationError)
    })

    it('refuses an access token presented as a refresh token, and the reverse', async () => {
      const { auth } = await setup()
      const pair = await auth.issueFor(alice)
      await expect(auth.refresh(pair.access_token)).rejects.toBeInstanceOf(TokenVerificationError)
      await expect(auth.authenticate(pair.refresh_token)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
    })
  })

  describe('access tokens', () => {
    it('carry the subject, email, groups and roles, and an audience of api and s3', async () => {
      const { auth } = await setup()
      const pair = await auth.issueFor(alice)
      const claims = await auth.jwt.verify('access', pair.access_token, 's3')
      expect(claims).toMatchObject({
        sub: 'alice',
        email: 'alice@example.test',
        groups: ['platform'],
        aud: ['api', 's3'],
      })
    })

    it('expire after their lifetime, by the injected clock', async () => {
      const { auth, clock } = await setup()
      const pair = await auth.issueFor(alice)
      clock.advance(3_600_000 + 10_000)
      await expect(auth.authenticate(pair.access_token)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
    })
  })

  describe('API tokens', () => {
    it('are shown once, stored only as a hash, and speak for their owner', async () => {
      const { auth, store } = await setup()
      const created = await auth.createApiToken(alice, 'ci')
      expect(created.token).toMatch(/^svc_tfe_[A-Za-z0-9_-]{43}$/)
      expect(created.id).toMatch(/^tok_[0-9a-f]{24}$/)
      expect(await auth.authenticate(created.token)).toMatchObject(alice)
      const listed = await store.list({ prefix: 'auth/' })
      for (const { key } of listed.objects) {
        const object = await store.get(key)
        const text = new TextDecoder().decode(await collect(object?.body))
        expect(text).not.toContain(created.token)
      }
    })

    it('are listed for their owner without their secret, and revoked by ID', async () => {
      const { auth } = await setup()
      const created = await auth.createApiToken(alice, 'ci')
      await auth.createApiToken({ ...alice, subject: 'bob' }, 'bob-ci')
      const mine = await auth.listApiTokens(alice)
      expect(mine).toEqual([
        {
          id: created.id,
          name: 'ci',
          subject: 'alice',
          created: created.created,
          expires: null,
          limit: null,
        },
      ])
      await auth.revokeApiToken(alice, created.id)
      await expect(auth.authenticate(created.token)).rejects.toBeInstanceOf(TokenVerificationError)
      expect(await auth.listApiTokens(alice)).toEqual([])
    })

    it("hides another's token from a revoke, but lets an administrator revoke any", async () => {
      const { auth } = await setup()
      const bobs = await auth.createApiToken({ ...alice, subject: 'bob' }, 'bob-ci')
      await expect(auth.revokeApiToken(alice, bobs.id)).rejects.toMatchObject({
        code: 'token_not_found',
      })
      expect(
        (await auth.listApiTokens({ ...alice, roles: ['admin'] })).map((token) => token.id),
      ).toContain(bobs.id)
      await auth.revokeApiToken({ ...alice, roles: ['admin'] }, bobs.id)
      await expect(auth.authenticate(bobs.token)).rejects.toBeInstanceOf(TokenVerificationError)
    })

    it('stop working once their expiry passes', async () => {
      const { auth, clock } = await setup()
      const created = await auth.createApiToken(alice, 'short', { expiresInSeconds: 60 })
      expect(await auth.authenticate(created.token)).toMatchObject(alice)
      clock.advance(61_000)
      await expect(auth.authenticate(created.token)).rejects.toBeInstanceOf(TokenVerificationError)
    })

    it('refuse a token of the right shape that was never issued', async () => {
      const { auth } = await setup()
      await expect(auth.authenticate(`svc_tfe_${'A'.repeat(43)}`)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
      await expect(auth.authenticate('svc_tfe_short')).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
    })
  })

  describe('what a presented token is', () => {
    it("says a login's access token is a session's, with its own expiry", async () => {
      const { auth, clock } = await setup()
      const pair = await auth.issueFor(alice)
      expect((await auth.authenticate(pair.access_token)).origin?.presented).toEqual({
        kind: 'session',
        expires: clock.now() + 3_600_000,
      })
    })

    it('says an access token without a login stands alone, with its expiry', async () => {
      const { auth, clock } = await setup()
      const token = await auth.accessToken(alice, 600_000)
      expect((await auth.authenticate(token)).origin?.presented).toEqual({
        kind: 'access_token',
        expires: clock.now() + 600_000,
      })
    })

    it('says an API token is one, with its expiry, or none for a token that never expires', async () => {
      const { auth, clock } = await setup()
      const lasting = await auth.createApiToken(alice, 'ci')
      const short = await auth.createApiToken(alice, 'short', { expiresInSeconds: 60 })
      expect((await auth.authenticate(lasting.token)).origin?.presented).toEqual({
        kind: 'api_token',
      })
      expect((await auth.authenticate(short.token)).origin?.presented).toEqual({
        kind: 'api_token',
        expires: clock.now() + 60_000,
      })
    })
  })

  describe('an API token named by its ID', () => {
    it('speaks for its owner, with its limit and origin, as the token itself does', async () => {
      const { auth } = await setup()
      const created = await auth.createApiToken(alice, 'ci', {
        limit: { scope: 'team/*', role: 'reader' },
      })
      expect(await auth.authenticateApiTokenId(created.id)).toEqual(
        await auth.authenticate(created.token),
      )
    })

    it('is refused once revoked or expired, or when it names no token', async () => {
      const { auth, clock } = await setup()
      const revoked = await auth.createApiToken(alice, 'gone')
      await auth.revokeApiToken(alice, revoked.id)
      await expect(auth.authenticateApiTokenId(revoked.id)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
      const short = await auth.createApiToken(alice, 'short', { expiresInSeconds: 60 })
      clock.advance(61_000)
      await expect(auth.authenticateApiTokenId(short.id)).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
      await expect(auth.authenticateApiTokenId('svc_tfe_not-an-id')).rejects.toBeInstanceOf(
        TokenVerificationError,
      )
    })
  })

  describe('removing a user', () => {
    const root: Identity = { subject: 'root', issuer: PROVIDER, groups: [], roles: [] }
    const bob: Identity = { subject: 'bob', issuer: PROVIDER, groups: ['platform'], roles: [] }
    const admins = { isAdmin: (identity: Identity) => identity.subject === 'root' }

    it('ends their API tokens, those made with them, their logins and what those minted', async () => {
      const { auth } = await setup(admins)
      const login = await auth.issueFor(alice)
      const fromLogin = await auth.createApiToken(
        await auth.authenticate(login.access_token),
        'laptop',
      )
      const ci = await auth.createApiToken(alice, 'ci')
      const child = await auth.createApiToken(await auth.authenticate(ci.token), 'child')
      const creds = await auth.s3.issue(await auth.authenticate(ci.token))
      const other = await auth.issueFor(alice)
      const bobs = await auth.createApiToken(bob, 'bob-ci')

      expect(await auth.endUser(root, { subject: 'alice', issuer: PROVIDER })).toEqual({
        tokens: 3,
        logins: 2,
      })
      for (const token of [fromLogin.token, ci.token, child.token, login.access_token]) {
        await expect(auth.authenticate(token)).rejects.toBeInstanceOf(TokenVerificationError)
      }
      for (const refresh of [login.refresh_token, other.refresh_token]) {
        await expect(auth.refresh(refresh)).rejects.toBeInstanceOf(TokenVerificationError)
      }
      await expect(auth.s3.verify(creds.SessionToken, creds.AccessKeyId)).rejects.toThrow()
      expect(await auth.authenticate(bobs.token)).toMatchObject({ subject: 'bob' })
    })

    it('is for administrators only', async () => {
      const { auth } = await setup(admins)
      const ci = await auth.createApiToken(alice, 'ci')
      await expect(auth.endUser(bob, { subject: 'alice', issuer: PROVIDER })).rejects.toMatchObject(
        {
          code: 'forbidden',
        },
      )
      expect(await auth.authenticate(ci.token)).toMatchObject({ subject: 'alice' })
    })

    it('lets every administrator the authorizer names list and revoke everyone\u2019s tokens', async () => {
      const { auth } = await setup(admins)
      const hers = await auth.createApiToken(alice, 'ci')
      expect((await auth.listApiTokens(root)).map((token) => token.id)).toEqual([hers.id])
      expect(await auth.listApiTokens(bob)).toEqual([])
      await expect(auth.revokeApiToken(bob, hers.id)).rejects.toMatchObject({
        code: 'token_not_found',
      })
      await auth.revokeApiToken(root, hers.id)
      await expect(auth.authenticate(hers.token)).rejects.toBeInstanceOf(TokenVerificationError)
    })
  })

  it('refuses an ID token exchange when no provider is configured', async () => {
    const { auth } = await setup()
    await expect(auth.exchange('x.y.z')).rejects.toBeInstanceOf(AuthError)
  })
})

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of body ?? []) chunks.push(chunk)
  return Buffer.concat(chunks)
}
