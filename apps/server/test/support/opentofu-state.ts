import { createCipheriv, createDecipheriv, pbkdf2Sync, randomBytes } from 'node:crypto'

/**
 * A state encrypted on the client in OpenTofu's format, made here because there is no OpenTofu
 * on these machines: its `pbkdf2` key provider and `aes_gcm` method as opentofu's
 * internal/encryption writes them (statedata over basedata). `serial` and `lineage` stay plain
 * beside the ciphertext; `meta` holds the key provider's parameters, base64 of their JSON;
 * `encrypted_data` is base64 of a 12-byte nonce, the ciphertext and the 16-byte tag.
 */
export interface SealedState {
  serial: number
  lineage: string
  meta: Record<string, string>
  encrypted_data: string
  encryption_version: string
}

/** Fewer than OpenTofu's default 600,000, as its minimum allows: tests derive many keys. */
const ITERATIONS = 200_000

interface Pbkdf2Meta {
  salt: string
  iterations: number
  hash_function: 'sha512'
  key_length: number
}

/** `plain` (a Terraform state's JSON) encrypted as OpenTofu would under `passphrase`. */
export function sealState(plain: string, passphrase: string, provider = 'team'): string {
  const state = JSON.parse(plain) as { serial: number; lineage: string }
  const salt = randomBytes(32)
  const meta: Pbkdf2Meta = {
    salt: salt.toString('base64'),
    iterations: ITERATIONS,
    hash_function: 'sha512',
    key_length: 32,
  }
  const key = pbkdf2Sync(passphrase, salt, ITERATIONS, 32, 'sha512')
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
  const body: SealedState = {
    serial: state.serial,
    lineage: state.lineage,
    meta: {
      [`key_provider.pbkdf2.${provider}`]: Buffer.from(JSON.stringify(meta)).toString('base64'),
    },
    encrypted_data: sealed.toString('base64'),
    encryption_version: 'v0',
  }
  return JSON.stringify(body)
}

/** The plain state inside `sealed`, as OpenTofu reads it back with `passphrase`. */
export function openState(sealed: string, passphrase: string): string {
  const body = JSON.parse(sealed) as SealedState
  const [metaText] = Object.values(body.meta)
  const meta = JSON.parse(Buffer.from(metaText ?? '', 'base64').toString()) as Pbkdf2Meta
  const key = pbkdf2Sync(
    passphrase,
    Buffer.from(meta.salt, 'base64'),
    meta.iterations,
    meta.key_length,
    meta.hash_function,
  )
  const data = Buffer.from(body.encrypted_data, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12))
  decipher.setAuthTag(data.subarray(data.length - 16))
  return Buffer.concat([
    decipher.update(data.subarray(12, data.length - 16)),
    decipher.final(),
  ]).toString()
}
