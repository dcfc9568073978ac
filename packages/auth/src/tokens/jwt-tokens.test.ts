import { SignJWT, UnsecuredJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { alice, ed25519Pem, setup } from '../../test/fixtures'
import { TOKEN_VERIFICATION_FAILED, TokenVerificationError } from '../errors'
import { loadKeySet } from '../keys/key-set'
import { JWT_KINDS, JwtTokens, type JwtKind } from './jwt-tokens'

const KINDS = Object.keys(JWT_KINDS) as JwtKind[]

async function refusal(promise: Promise<unknown>): Promise<TokenVerificationError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(TokenVerificationError)
  expect((error as TokenVerificationError).message).toBe(TOKEN_VERIFICATION_FAILED)
  return error as TokenVerificationError
}

describe("Cairn's JWTs", () => {
  it('verifies each kind as itself', async () => {
    const { auth } = await setup()
    for (const kind of KINDS) {
      const token = await auth.jwt.sign(kind, 'alice', {}, 60_000)
      expect((await auth.jwt.verify(kind, token)).sub).toBe('alice')
    }
  })

  it.each(
    KINDS.flatMap((signed) =>
      KINDS.filter((other) => other !== signed).map((expected) => [signed, expected]),
    ),
  )('refuses a %s token where a %s token is expected', async (signed, expected) => {
    const { auth } = await setup()
    const token = await auth.jwt.sign(signed, 'alice', {}, 60_000)
    const error = await refusal(auth.jwt.verify(expected, token))
    expect(error.reason).toContain('typ')
  })

  it('signs an access token for a narrower audience, refused where the rest is expected', async () => {
    const { auth } = await setup()
    const token = await auth.jwt.sign('access', 'alice', {}, 60_000, ['s3'])
    expect((await auth.jwt.verify('access', token, 's3')).aud).toEqual(['s3'])
    const error = await refusal(auth.jwt.verify('access', token, 'api'))
    expect(error.reason).toContain('aud')
  })

  it("never widens a kind's audience", async () => {
    const { auth } = await setup()
    await expect(auth.jwt.sign('refresh', 'alice', {}, 60_000, ['api'])).rejects.toThrow(TypeError)
    await expect(auth.jwt.sign('access', 'alice', {}, 60_000, [])).rejects.toThrow(TypeError)
  })

  it('refuses a token whose signature was tampered with', async () => {
    const { auth } = await setup()
    const token = await auth.jwt.sign('access', 'alice', {}, 60_000)
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const forged = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload, 'base64url').toString()),
        sub: 'mallory',
      }),
    ).toString('base64url')
    await refusal(auth.jwt.verify('access', `${header}.${forged}.${signature}`))
    const flipped = signature.slice(0, -2) + (signature.endsWith('AA') ? 'BB' : 'AA')
    await refusal(auth.jwt.verify('access', `${header}.${payload}.${flipped}`))
  })

  it('refuses a token signed by a key it does not list (unknown kid)', async () => {
    const { auth, clock } = await setup()
    const stranger = new JwtTokens({
      keys: await loadKeySet({ privateKeyPem: ed25519Pem(), kid: 'stranger' }),
      issuer: 'https://cairn.example.test',
      clock,
    })
    const error = await refusal(
      auth.jwt.verify('access', await stranger.sign('access', 'alice', {}, 60_000)),
    )
    expect(error.reason).toContain('unknown signing key')
  })

  it('refuses a token from another issuer', async () => {
    const { auth, keys, clock } = await setup()
    const other = new JwtTokens({ keys, issuer: 'https://elsewhere.example.test', clock })
    const error = await refusal(
      auth.jwt.verify('access', await other.sign('access', 'alice', {}, 60_000)),
    )
    expect(error.reason).toContain('iss')
  })

  it('refuses alg none', async () => {
    const { auth } = await setup()
    const unsigned = new UnsecuredJWT({ sub: 'alice', jti: 'x' })
      .setIssuer('https://cairn.example.test')
      .setAudience(['api'])
      .setIssuedAt()
      .setExpirationTime('1h')
      .encode()
    await refusal(auth.jwt.verify('access', unsigned))
  })

  it('refuses an expired token and one not yet valid, by the injected clock', async () => {
    const { auth, clock, keys } = await setup()
    const token = await auth.jwt.sign('access', 'alice', {}, 60_000)
    clock.advance(61_000 + 5_000)
    expect((await refusal(auth.jwt.verify('access', token))).reason).toContain('expired')

    const early = await new SignJWT({ jti: 'early' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'at+jwt' })
      .setIssuer('https://cairn.example.test')
      .setSubject('alice')
      .setAudience(['api', 's3'])
      .setIssuedAt(Math.floor(clock.now() / 1000))
      .setNotBefore(Math.floor(clock.now() / 1000) + 3600)
      .setExpirationTime(Math.floor(clock.now() / 1000) + 7200)
      .sign(keys.signing.privateKey)
    expect((await refusal(auth.jwt.verify('access', early))).reason).toContain('nbf')
  })

  it('verifies tokens signed by a previous key while it is listed, and not after', async () => {
    const oldPem = ed25519Pem()
    const before = await setup({ keys: await loadKeySet({ privateKeyPem: oldPem, kid: 'k1' }) })
    const token = await before.auth.jwt.sign('access', alice.subject, {}, 60_000)

    const rotated = await loadKeySet({
      privateKeyPem: ed25519Pem(),
      kid: 'k2',
      previous: [{ pem: oldPem, kid: 'k1' }],
    })
    const after = new JwtTokens({
      keys: rotated,
      issuer: 'https://cairn.example.test',
      clock: before.clock,
    })
    expect((await after.verify('access', token)).sub).toBe('alice')
    const fresh = await after.sign('access', 'alice', {}, 60_000)
    expect(
      JSON.parse(Buffer.from(fresh.split('.')[0] as string, 'base64url').toString()),
    ).toMatchObject({ kid: 'k2' })

    const dropped = new JwtTokens({
      keys: await loadKeySet({ privateKeyPem: ed25519Pem(), kid: 'k3' }),
      issuer: 'https://cairn.example.test',
      clock: before.clock,
    })
    await refusal(dropped.verify('access', token))
  })

  it('says nothing of the token in the reason it gives', async () => {
    const { auth } = await setup()
    const token = await auth.jwt.sign('refresh', 'alice', {}, 60_000)
    const error = await refusal(auth.jwt.verify('access', token))
    expect(error.reason).not.toContain(token)
    expect(error.reason).not.toContain(token.split('.')[2])
  })
})
