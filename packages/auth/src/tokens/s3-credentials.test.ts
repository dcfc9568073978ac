import { createPublicKey } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import { alice, ed25519Pem, PROVIDER, setup } from '../../test/fixtures'
import { S3CredentialError, TokenVerificationError, type S3CredentialFailure } from '../errors'
import { LOCAL_ISSUER, type Identity } from '../identity'
import { loadKeySet } from '../keys/key-set'

const HOUR = 3_600_000

/** The refusal `promise` ends in, which must be an `S3CredentialError` for `reason`. */
async function refusal(promise: Promise<unknown>, reason: S3CredentialFailure): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(S3CredentialError)
  expect(error).toMatchObject({ code: 'unauthorized', reason })
}

describe('S3 session credentials', () => {
  it('issues AWS process credentials that verify as the identity they were issued to', async () => {
    const { auth, clock } = await setup()
    const caller = await auth.authenticate((await auth.issueFor(alice)).access_token)
    const creds = await auth.s3.issue(caller)
    expect(creds).toEqual({
      Version: 1,
      AccessKeyId: expect.stringMatching(/^CSK[A-Z2-7]{17}$/) as string,
      SecretAccessKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as string,
      SessionToken: expect.any(String) as string,
      Expiration: new Date(clock.now() + HOUR).toISOString(),
    })
    const verified = await auth.s3.verify(creds.SessionToken, creds.AccessKeyId)
    expect(verified.secretAccessKey).toBe(creds.SecretAccessKey)
    expect(verified.identity).toEqual({
      ...alice,
      origin: { family: caller.origin?.family, expires: clock.now() + HOUR, tokens: [] },
    })
  })

  it('makes the session token an access JWT for s3 alone, which /v1 refuses', async () => {
    const { auth } = await setup()
    const creds = await auth.s3.issue(alice)
    expect(decodeProtectedHeader(creds.SessionToken)).toEqual({
      alg: 'EdDSA',
      kid: 'k1',
      typ: 'at+jwt',
    })
    expect(decodeJwt(creds.SessionToken)).toMatchObject({
      aud: ['s3'],
      sub: 'alice',
      idp: PROVIDER,
      email: 'alice@example.test',
      groups: ['platform'],
    })
    await expect(auth.authenticate(creds.SessionToken)).rejects.toBeInstanceOf(
      TokenVerificationError,
    )
  })

  it('refuses a session whose JWT expired with reason expired', async () => {
    const { auth, clock } = await setup()
    const creds = await auth.s3.issue(alice)
    clock.advance(HOUR + 10_000)
    await refusal(auth.s3.verify(creds.SessionToken, creds.AccessKeyId), 'expired')
  })

  it('refuses an access token whose audience is api alone', async () => {
    const { auth } = await setup()
    const token = await auth.jwt.sign('access', 'alice', { idp: PROVIDER }, HOUR, ['api'])
    await refusal(auth.s3.verify(token, 'CSKAAAAAAAAAAAAAAAAA'), 'invalid')
  })

  it.each(['refresh', 'code'] as const)('refuses a %s token', async (kind) => {
    const { auth } = await setup()
    const token = await auth.jwt.sign(kind, 'alice', {}, HOUR)
    await refusal(auth.s3.verify(token, 'CSKAAAAAAAAAAAAAAAAA'), 'invalid')
  })

  it('refuses a token that is no JWT at all', async () => {
    const { auth } = await setup()
    await refusal(auth.s3.verify('not-a-token', 'CSKAAAAAAAAAAAAAAAAA'), 'invalid')
  })

  it('refuses an access key ID that is not the session token', async () => {
    const { auth } = await setup()
    const one = await auth.s3.issue(alice)
    const other = await auth.s3.issue(alice)
    await refusal(auth.s3.verify(one.SessionToken, other.AccessKeyId), 'access_key_mismatch')
    await refusal(auth.s3.verify(one.SessionToken, 'short'), 'access_key_mismatch')
  })

  it('derives a different key ID and secret for every session', async () => {
    const { auth } = await setup()
    const one = await auth.s3.issue(alice)
    const other = await auth.s3.issue(alice)
    expect(other.SessionToken).not.toBe(one.SessionToken)
    expect(other.AccessKeyId).not.toBe(one.AccessKeyId)
    expect(other.SecretAccessKey).not.toBe(one.SecretAccessKey)
  })

  it('refuses the session of a login whose family was revoked', async () => {
    const { auth } = await setup()
    const first = await auth.issueFor(alice)
    const creds = await auth.s3.issue(await auth.authenticate(first.access_token))
    await auth.refresh(first.refresh_token)
    await expect(auth.refresh(first.refresh_token)).rejects.toThrow()
    await refusal(auth.s3.verify(creds.SessionToken, creds.AccessKeyId), 'invalid')
  })

  it('refuses the session of an API token once it, or a token it hangs from, is revoked', async () => {
    const { auth } = await setup()
    const parent = await auth.createApiToken(alice, 'parent')
    const child = await auth.createApiToken(await auth.authenticate(parent.token), 'child')
    const caller = await auth.authenticate(child.token)
    const creds = await auth.s3.issue(caller)
    expect(decodeJwt(creds.SessionToken)['tok']).toEqual([parent.id, child.id])
    const { identity } = await auth.s3.verify(creds.SessionToken, creds.AccessKeyId)
    expect(identity.origin?.tokens).toEqual([parent.id, child.id])
    await auth.revokeApiToken(alice, parent.id)
    await refusal(auth.s3.verify(creds.SessionToken, creds.AccessKeyId), 'invalid')
  })

  it('carries the limit of the API token it was issued to', async () => {
    const { auth } = await setup()
    const limit = { scope: 'team/app/*', role: 'writer' }
    const ci = await auth.createApiToken(alice, 'ci', { limit })
    const creds = await auth.s3.issue(await auth.authenticate(ci.token))
    const { identity } = await auth.s3.verify(creds.SessionToken, creds.AccessKeyId)
    expect(identity).toMatchObject({ subject: 'alice', issuer: PROVIDER, limit })
  })

  it('never outlives the token it was issued to', async () => {
    const { auth, clock } = await setup()
    const short = await auth.createApiToken(alice, 'short', { expiresInSeconds: 600 })
    const creds = await auth.s3.issue(await auth.authenticate(short.token))
    expect(creds.Expiration).toBe(short.expires)
    clock.advance(600_000)
    // Within the JWT's clock tolerance still, but the API token it came from has expired.
    await refusal(auth.s3.verify(creds.SessionToken, creds.AccessKeyId), 'invalid')
    clock.advance(10_000)
    await refusal(auth.s3.verify(creds.SessionToken, creds.AccessKeyId), 'expired')
  })

  it('is verified by another instance that shares the signing key, with no shared state', async () => {
    const keys = await loadKeySet({ privateKeyPem: ed25519Pem(), kid: 'k1' })
    const one = await setup({ keys })
    const two = await setup({ keys, clock: one.clock })
    const creds = await one.auth.s3.issue(alice)
    const verified = await two.auth.s3.verify(creds.SessionToken, creds.AccessKeyId)
    expect(verified.secretAccessKey).toBe(creds.SecretAccessKey)
    expect(verified.identity.subject).toBe('alice')
  })

  it('derives another secret under another signing key, so a rotation ends older sessions', async () => {
    const oldPem = ed25519Pem()
    const before = await setup({ keys: await loadKeySet({ privateKeyPem: oldPem, kid: 'k1' }) })
    const creds = await before.auth.s3.issue(alice)
    const oldPublic = createPublicKey(oldPem).export({ format: 'pem', type: 'spki' }).toString()
    const rotated = await loadKeySet({
      privateKeyPem: ed25519Pem(),
      kid: 'k2',
      previous: [{ pem: oldPublic, kid: 'k1' }],
    })
    const after = await setup({ keys: rotated, clock: before.clock })
    const again = await after.auth.s3.issue(alice)
    expect(again.SecretAccessKey).not.toBe(creds.SecretAccessKey)
    // The old JWT still verifies (k1 is listed), but nothing secret derives from a public key.
    expect((await after.auth.jwt.verify('access', creds.SessionToken, 's3')).sub).toBe('alice')
    await refusal(
      after.auth.s3.verify(creds.SessionToken, creds.AccessKeyId),
      'access_key_mismatch',
    )
  })

  it('refuses a local-mode session where local tokens are not accepted', async () => {
    const keys = await loadKeySet({ privateKeyPem: ed25519Pem(), kid: 'k1' })
    const local = await setup({ keys, acceptLocal: true })
    const admin: Identity = { subject: 'local-admin', issuer: LOCAL_ISSUER, groups: [], roles: [] }
    const creds = await local.auth.s3.issue(admin)
    await expect(local.auth.s3.verify(creds.SessionToken, creds.AccessKeyId)).resolves.toBeTruthy()
    const strict = await setup({ keys, acceptLocal: false, clock: local.clock })
    await refusal(strict.auth.s3.verify(creds.SessionToken, creds.AccessKeyId), 'invalid')
  })
})
