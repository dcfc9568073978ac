import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ed25519Pem } from '../../test/fixtures'
import { KeyError, loadKeySet, toJwks } from './key-set'

describe('the key set', () => {
  it('names the signing key by its RFC 7638 thumbprint when no kid is given', async () => {
    const keys = await loadKeySet({ privateKeyPem: ed25519Pem() })
    expect(keys.signing.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(keys.ephemeral).toBe(false)
  })

  it('generates an ephemeral key when none is given', async () => {
    const keys = await loadKeySet({})
    expect(keys.ephemeral).toBe(true)
  })

  it('lists the signing key and every previous key in the JWKS, without private parts', async () => {
    const previous = ed25519Pem()
    const keys = await loadKeySet({
      privateKeyPem: ed25519Pem(),
      kid: 'k2',
      previous: [{ pem: previous, kid: 'k1' }],
    })
    const jwks = toJwks(keys)
    expect(jwks.keys.map((key) => key.kid)).toEqual(['k2', 'k1'])
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' })
      expect(key).not.toHaveProperty('d')
    }
  })

  it('refuses a key that is not Ed25519, text that is not PEM, and a kid used twice', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString()
    await expect(loadKeySet({ privateKeyPem: rsa })).rejects.toThrow('not Ed25519')
    await expect(loadKeySet({ privateKeyPem: 'not a key' })).rejects.toBeInstanceOf(KeyError)
    await expect(
      loadKeySet({
        privateKeyPem: ed25519Pem(),
        kid: 'k1',
        previous: [{ pem: ed25519Pem(), kid: 'k1' }],
      }),
    ).rejects.toThrow('share the kid k1')
  })

  it('derives the same secret from the same key, and different ones per purpose', async () => {
    const pem = ed25519Pem()
    const one = await loadKeySet({ privateKeyPem: pem })
    const two = await loadKeySet({ privateKeyPem: pem })
    expect(one.derive('oauth-state').equals(two.derive('oauth-state'))).toBe(true)
    expect(one.derive('oauth-state').equals(one.derive('other'))).toBe(false)
    expect(one.derive('oauth-state')).toHaveLength(32)
  })
})
