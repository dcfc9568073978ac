import { randomBytes } from 'node:crypto'
import { ManualClock } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { INVALID_STATE, Sealer } from '../sealing/sealer'
import { challengeOf, isChallenge, newVerifier, verifierMatches } from './pkce'

describe('OAuth state', () => {
  const key = randomBytes(32)

  it('opens what it sealed, on any instance with the same key', () => {
    const clock = new ManualClock()
    const sealed = new Sealer(key, clock).seal({
      redirect: 'http://127.0.0.1:10000/login',
    })
    expect(new Sealer(Buffer.from(key), clock).open(sealed)).toEqual({
      redirect: 'http://127.0.0.1:10000/login',
    })
  })

  it('refuses state sealed with another key, tampered with, or older than five minutes', () => {
    const clock = new ManualClock()
    const sealer = new Sealer(key, clock)
    const sealed = sealer.seal({ a: 1 })
    expect(() => new Sealer(randomBytes(32), clock).open(sealed)).toThrow(INVALID_STATE)
    const bytes = Buffer.from(sealed, 'base64url')
    bytes[20] = (bytes[20] as number) ^ 1
    expect(() => sealer.open(bytes.toString('base64url'))).toThrow(INVALID_STATE)
    expect(() => sealer.open('short')).toThrow(INVALID_STATE)
    clock.advance(5 * 60 * 1000)
    expect(() => sealer.open(sealed)).toThrow(INVALID_STATE)
  })

  it('seals the same payload differently each time', () => {
    const sealer = new Sealer(key, new ManualClock())
    expect(sealer.seal({ a: 1 })).not.toBe(sealer.seal({ a: 1 }))
  })
})

describe('PKCE', () => {
  it('computes the S256 challenge of RFC 7636 appendix B', () => {
    expect(challengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    )
    expect(
      verifierMatches(
        'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      ),
    ).toBe(true)
  })

  it('refuses a verifier that does not match, or is too short', () => {
    const verifier = newVerifier()
    expect(verifierMatches(newVerifier(), challengeOf(verifier))).toBe(false)
    expect(verifierMatches('short', challengeOf('short'))).toBe(false)
    expect(isChallenge(challengeOf(verifier))).toBe(true)
    expect(isChallenge('plain-challenge')).toBe(false)
  })
})
