import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
} from 'node:crypto'
import { calculateJwkThumbprint, importJWK, type CryptoKey, type JWK } from 'jose'

/** The key that signs Cairn's tokens now. */
export interface SigningKey {
  kid: string
  privateKey: CryptoKey
  publicJwk: JWK
}

/** A key that verifies Cairn's tokens: the current one, or one still listed after a rotation. */
export interface VerificationKey {
  kid: string
  publicKey: CryptoKey
  publicJwk: JWK
}

/**
 * The signing key and every key tokens may still be signed with (RFC 7517 key IDs). A token whose
 * `kid` is not here fails verification, so removing a previous key revokes what it signed.
 */
export interface KeySet {
  signing: SigningKey
  verification: ReadonlyMap<string, VerificationKey>
  /** 32 bytes derived from the signing key (HKDF-SHA256), for secrets that must follow it. */
  derive(purpose: string): Buffer
  /** True when the key was generated at start: tokens die with the process. */
  ephemeral: boolean
}

export interface KeySetOptions {
  /** An Ed25519 private key in PEM (PKCS#8); a new one is generated when absent. */
  privateKeyPem?: string
  /** The signing key's ID; its RFC 7638 thumbprint when absent. */
  kid?: string
  /** Keys of earlier rotations, still accepted for verification: public or private PEM. */
  previous?: { pem: string; kid?: string }[]
}

/** A key that cannot be used; the message says which and why. */
export class KeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KeyError'
  }
}

/**
 * Builds the key set from PEM text (the server reads the files; this package reads no paths).
 *
 * @throws KeyError for a key that is not Ed25519, cannot be parsed, or shares a kid.
 */
export async function loadKeySet(options: KeySetOptions): Promise<KeySet> {
  const ephemeral = options.privateKeyPem === undefined
  const privateKey = ephemeral
    ? generateKeyPairSync('ed25519').privateKey
    : parsePrivate(options.privateKeyPem ?? '')
  const current = await toVerification(createPublicKey(privateKey), options.kid)
  const signing: SigningKey = {
    kid: current.kid,
    privateKey: await importPrivate(privateKey, current.kid),
    publicJwk: current.publicJwk,
  }
  const verification = new Map<string, VerificationKey>([[current.kid, current]])
  for (const [index, previous] of (options.previous ?? []).entries()) {
    const key = await toVerification(parsePublic(previous.pem, index), previous.kid)
    if (verification.has(key.kid))
      throw new KeyError(`two verification keys share the kid ${key.kid}`)
    verification.set(key.kid, key)
  }
  const secret = Buffer.from(privateKey.export({ format: 'jwk' }).d ?? '', 'base64url')
  return {
    signing,
    verification,
    ephemeral,
    derive: (purpose) => Buffer.from(hkdfSync('sha256', secret, 'cairn', purpose, 32)),
  }
}

/** The JWKS document (RFC 7517) of every verification key, the signing key first. */
export function toJwks(keys: KeySet): { keys: JWK[] } {
  return { keys: [...keys.verification.values()].map((key) => key.publicJwk) }
}

function parsePrivate(pem: string): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch (error) {
    throw new KeyError(`the signing key is not a PEM private key: ${(error as Error).message}`)
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new KeyError(`the signing key is ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`)
  }
  return key
}

function parsePublic(pem: string, index: number): KeyObject {
  let key: KeyObject
  try {
    key = createPublicKey(pem)
  } catch (error) {
    throw new KeyError(`previous key ${index + 1} is not a PEM key: ${(error as Error).message}`)
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new KeyError(
      `previous key ${index + 1} is ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`,
    )
  }
  return key
}

async function toVerification(
  publicKey: KeyObject,
  kid: string | undefined,
): Promise<VerificationKey> {
  const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string }
  const id = kid ?? (await calculateJwkThumbprint(jwk))
  const publicJwk: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: id, alg: 'EdDSA', use: 'sig' }
  return { kid: id, publicKey: (await importJWK(publicJwk, 'EdDSA')) as CryptoKey, publicJwk }
}

async function importPrivate(privateKey: KeyObject, kid: string): Promise<CryptoKey> {
  const jwk = privateKey.export({ format: 'jwk' }) as JWK
  return (await importJWK({ ...jwk, kid, alg: 'EdDSA' }, 'EdDSA')) as CryptoKey
}
