import { ManualClock } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { alice, MemoryLoginDirectory, setup } from '../../test/fixtures'
import { TokenVerificationError } from '../errors'
import { LOCAL_ISSUER, type Identity } from '../identity'

const HOUR = 3_600_000
const MAX_AGE = 720 * HOUR

/**
 * An auth service that keeps last logins, as the server wires it (each login recorded), with alice
 * signed in now with her first groups.
 */
async function signedIn() {
  const logins = new MemoryLoginDirectory()
  const clock = new ManualClock(Date.parse('2026-11-22T00:00:00Z'))
  const fixture = await setup({
    clock,
    logins: { directory: logins, maxAgeMs: MAX_AGE },
    onLogin: (identity) => {
      logins.record(identity, clock.now())
    },
  })
  await fixture.auth.loggedIn(alice)
  return { ...fixture, logins }
}

/** Alice as her provider sees her later: out of `platform`, into `readers`, a new address. */
const aliceLater: Identity = {
  ...alice,
  email: 'alice@new.example.test',
  groups: ['readers'],
}

describe('API tokens and the last login of their owner', () => {
  it('speak with the groups and email of the last login, not those they were made with', async () => {
    const { auth, clock } = await signedIn()
    const { token } = await auth.createApiToken(alice, 'ci')
    expect(await auth.authenticate(token)).toMatchObject({ groups: ['platform'] })
    clock.advance(HOUR)
    await auth.loggedIn(aliceLater)
    expect(await auth.authenticate(token)).toMatchObject({
      subject: 'alice',
      email: 'alice@new.example.test',
      groups: ['readers'],
      roles: [],
    })
  })

  it('drop an email the last login did not give', async () => {
    const { auth } = await signedIn()
    const { token } = await auth.createApiToken(alice, 'ci')
    const { email: _email, ...unverified } = alice
    await auth.loggedIn(unverified)
    expect(await auth.authenticate(token)).not.toHaveProperty('email')
  })

  it('keep their limit and their origin', async () => {
    const { auth } = await signedIn()
    const made = await auth.createApiToken(alice, 'ci', {
      limit: { scope: 'team/*', role: 'reader' },
    })
    const identity = await auth.authenticate(made.token)
    expect(identity.limit).toEqual({ scope: 'team/*', role: 'reader' })
    expect(identity.origin?.apiToken).toEqual({ id: made.id, name: 'ci' })
  })

  it('are refused once the owner has not signed in for longer than the maximum age, until they do', async () => {
    const { auth, clock } = await signedIn()
    const { token } = await auth.createApiToken(alice, 'ci')
    clock.advance(MAX_AGE - HOUR)
    expect(await auth.authenticate(token)).toMatchObject({ subject: 'alice' })
    clock.advance(2 * HOUR)
    const refused = await auth.authenticate(token).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TokenVerificationError)
    expect((refused as TokenVerificationError).reason).toMatch(/SVC_TOKENS_LOGIN_MAX_AGE/)
    await auth.loggedIn(alice)
    expect(await auth.authenticate(token)).toMatchObject({ subject: 'alice' })
  })

  it('are refused when their owner has no login on record', async () => {
    const { auth } = await signedIn()
    const bob: Identity = { ...alice, subject: 'bob', email: 'bob@example.test' }
    const { token } = await auth.createApiToken(bob, 'ci')
    const refused = await auth.authenticate(token).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TokenVerificationError)
    expect((refused as TokenVerificationError).reason).toMatch(/no login on record/)
  })

  it("leave local mode's tokens as they were made: there is no provider to ask", async () => {
    const { auth } = await signedIn()
    const admin: Identity = {
      subject: 'local-admin',
      issuer: LOCAL_ISSUER,
      groups: [],
      roles: ['admin'],
    }
    const { token } = await auth.createApiToken(admin, 'ci')
    expect(await auth.authenticate(token)).toMatchObject({ roles: ['admin'] })
  })

  it('are given what the S3 credentials minted with them carry', async () => {
    const { auth } = await signedIn()
    const { token } = await auth.createApiToken(alice, 'ci')
    await auth.loggedIn(aliceLater)
    const creds = await auth.s3.issue(await auth.authenticate(token))
    const claims = await auth.jwt.verify('access', creds.SessionToken, 's3')
    expect(claims['groups']).toEqual(['readers'])
  })

  it('read the store once a while per user, and at once after a login on this instance', async () => {
    const { auth, clock, logins } = await signedIn()
    const { token } = await auth.createApiToken(alice, 'ci')
    // The login on this instance is remembered: no read at all.
    await auth.authenticate(token)
    expect(logins.reads).toBe(0)
    clock.advance(31_000)
    await Promise.all([auth.authenticate(token), auth.authenticate(token)])
    expect(logins.reads).toBe(1)
    // A login on another instance shows once this instance reads the store again.
    logins.record(aliceLater, clock.now())
    expect(await auth.authenticate(token)).toMatchObject({ groups: ['platform'] })
    clock.advance(31_000)
    expect(await auth.authenticate(token)).toMatchObject({ groups: ['readers'] })
    expect(logins.reads).toBe(2)
  })
})

describe('refresh tokens and the last login of their owner', () => {
  it('give access tokens the groups of the last login, which may be a later one', async () => {
    const { auth } = await signedIn()
    const pair = await auth.issueFor(alice)
    await auth.loggedIn(aliceLater)
    const refreshed = await auth.refresh(pair.refresh_token)
    expect(await auth.authenticate(refreshed.access_token)).toMatchObject({
      groups: ['readers'],
      email: 'alice@new.example.test',
    })
  })

  it('are refused once the last login is older than the maximum age', async () => {
    const { auth, clock } = await signedIn()
    let pair = await auth.issueFor(alice)
    // Refreshing every day keeps the session, but not past the age of the last login.
    for (let day = 0; day < 29; day += 1) {
      clock.advance(24 * HOUR)
      pair = await auth.refresh(pair.refresh_token)
    }
    clock.advance(2 * 24 * HOUR)
    await expect(auth.refresh(pair.refresh_token)).rejects.toBeInstanceOf(TokenVerificationError)
  })
})
