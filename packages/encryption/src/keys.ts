import { execFile } from 'node:child_process'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'

/**
 * Key-encryption keys (DESIGN section 15): `SVC_ENCRYPTION_KEYS=k2=file:/etc/cairn/k2.key,k1=...`;
 * the first wraps new data keys, every one listed unwraps. A provider wraps and unwraps a data
 * key bound to the object's storage key (`context`).
 */
export interface KeyEncryptionKey {
  readonly id: string
  wrap(dataKey: Buffer, context: string): Promise<string>
  unwrap(wrapped: string, context: string): Promise<Buffer>
}

/** A key setting that cannot be used: one line that names the key and what is wrong. */
export class KeySetupError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KeySetupError'
  }
}

/** A wrapped key that does not open under its KEK (another key, or changed). */
export class UnwrapError extends Error {
  constructor(kek: string, context: string) {
    super(`the data key of ${context} does not open under key-encryption key ${kek}`)
    this.name = 'UnwrapError'
  }
}

const ID = /^[A-Za-z0-9_.-]{1,64}$/

/** The keys a setting names, loaded and checked; the first is the one that wraps. */
export async function loadKeys(setting: string): Promise<KeyEncryptionKey[]> {
  const entries = setting
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  if (entries.length === 0) throw new KeySetupError('-encryption-keys names no key')
  const keys: KeyEncryptionKey[] = []
  for (const entry of entries) {
    const equals = entry.indexOf('=')
    const id = equals < 0 ? '' : entry.slice(0, equals)
    const spec = equals < 0 ? entry : entry.slice(equals + 1)
    if (!ID.test(id)) {
      throw new KeySetupError(
        `-encryption-keys: ${entry} must be <id>=<provider>:<argument>, the id letters, digits, . _ or -`,
      )
    }
    if (keys.some((key) => key.id === id))
      throw new KeySetupError(`-encryption-keys names key ${id} twice`)
    const colon = spec.indexOf(':')
    const provider = colon < 0 ? spec : spec.slice(0, colon)
    const argument = colon < 0 ? '' : spec.slice(colon + 1)
    if (argument === '')
      throw new KeySetupError(
        `-encryption-keys: key ${id} names no ${provider === '' ? 'provider' : `${provider} argument`}`,
      )
    if (provider === 'file') keys.push(await fileKey(id, argument))
    else if (provider === 'command') keys.push(await commandKey(id, argument))
    else
      throw new KeySetupError(
        `-encryption-keys: key ${id} has provider ${provider}; the providers are file: and command:`,
      )
  }
  return keys
}

/** A KEK in a file: 32 bytes, raw or base64, readable by the server only. */
async function fileKey(id: string, path: string): Promise<KeyEncryptionKey> {
  let bytes: Buffer
  try {
    const info = await stat(path)
    if ((info.mode & 0o077) !== 0) {
      throw new KeySetupError(
        `key ${id}: ${path} is readable by others (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it`,
      )
    }
    bytes = await readFile(path)
  } catch (error) {
    if (error instanceof KeySetupError) throw error
    throw new KeySetupError(
      `key ${id}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    )
  }
  const text = bytes.toString('utf8').trim()
  const key =
    bytes.length === 32
      ? bytes
      : /^[A-Za-z0-9+/]{43}=$/.test(text)
        ? Buffer.from(text, 'base64')
        : undefined
  if (key?.length !== 32) {
    throw new KeySetupError(
      `key ${id}: ${path} must hold 32 random bytes, raw or base64 (head -c 32 /dev/urandom | base64)`,
    )
  }
  return {
    id,
    wrap: (dataKey, context) => {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, nonce)
      cipher.setAAD(Buffer.from(`cairn-data-key|${id}|${context}`))
      const sealed = Buffer.concat([
        nonce,
        cipher.update(dataKey),
        cipher.final(),
        cipher.getAuthTag(),
      ])
      return Promise.resolve(sealed.toString('base64'))
    },
    unwrap: (wrapped, context) => {
      const sealed = Buffer.from(wrapped, 'base64')
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12))
        decipher.setAAD(Buffer.from(`cairn-data-key|${id}|${context}`))
        decipher.setAuthTag(sealed.subarray(sealed.length - 16))
        return Promise.resolve(
          Buffer.concat([
            decipher.update(sealed.subarray(12, sealed.length - 16)),
            decipher.final(),
          ]),
        )
      } catch {
        return Promise.reject(new UnwrapError(id, context))
      }
    },
  }
}

/** How long a data key a program unwrapped is kept in memory, and how many are. */
export const UNWRAPPED_KEY_TTL_MS = 5 * 60_000
export const UNWRAPPED_KEYS_KEPT = 4096

/**
 * `unwrap`, remembering what it answered: a program (a Vault or KMS round trip) runs once for an
 * object read many times (the current state of a busy unit), and once for reads of one object at
 * the same moment, for `UNWRAPPED_KEY_TTL_MS` and the last `UNWRAPPED_KEYS_KEPT` keys. Keyed by
 * the wrapped key and its context, so a changed header asks again. Each caller gets its own copy.
 */
export function remembered(
  unwrap: KeyEncryptionKey['unwrap'],
  now: () => number = Date.now,
): KeyEncryptionKey['unwrap'] {
  const kept = new Map<string, { key: Promise<Buffer>; until: number }>()
  return async (wrapped, context) => {
    const name = `${context}\n${wrapped}`
    const at = now()
    let entry = kept.get(name)
    if (entry !== undefined) kept.delete(name)
    if (entry === undefined || entry.until <= at) {
      const key = unwrap(wrapped, context)
      entry = { key, until: at + UNWRAPPED_KEY_TTL_MS }
      key.catch(() => {
        if (kept.get(name)?.key === key) kept.delete(name)
      })
    }
    // Newest last: the first is the least recently used.
    kept.set(name, entry)
    for (const oldest of kept.keys()) {
      if (kept.size <= UNWRAPPED_KEYS_KEPT) break
      kept.delete(oldest)
    }
    return Buffer.from(await entry.key)
  }
}

/**
 * A KEK behind an external program (Vault or OpenBao transit, a cloud KMS through its CLI): it
 * reads one JSON request on stdin, `{"action": "wrap", "key_id", "context", "plaintext"}` or
 * `{"action": "unwrap", "key_id", "context", "ciphertext"}` (base64), and writes one JSON answer
 * on stdout, `{"ciphertext"}` or `{"plaintext"}`; a non-zero exit is a refusal.
 */
async function commandKey(id: string, path: string): Promise<KeyEncryptionKey> {
  try {
    await stat(path)
  } catch {
    throw new KeySetupError(`key ${id}: the command ${path} does not exist`)
  }
  const call = (request: Record<string, string>): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const child = execFile(
        path,
        [],
        { timeout: 30_000, maxBuffer: 1024 * 1024 },
        (error, stdout) => {
          if (error !== null) {
            reject(
              new KeySetupError(
                `key ${id}: the command ${path} failed (${error.code ?? error.signal ?? 'error'})`,
              ),
            )
            return
          }
          try {
            resolve(JSON.parse(stdout) as Record<string, unknown>)
          } catch {
            reject(
              new KeySetupError(
                `key ${id}: the command ${path} answered something that is not JSON`,
              ),
            )
          }
        },
      )
      child.stdin?.end(JSON.stringify(request))
    })
  return {
    id,
    wrap: async (dataKey, context) => {
      const answer = await call({
        action: 'wrap',
        key_id: id,
        context,
        plaintext: dataKey.toString('base64'),
      })
      if (typeof answer['ciphertext'] !== 'string')
        throw new KeySetupError(`key ${id}: the command ${path} answered no ciphertext`)
      return answer['ciphertext']
    },
    unwrap: remembered(async (wrapped, context) => {
      const answer = await call({
        action: 'unwrap',
        key_id: id,
        context,
        ciphertext: wrapped,
      }).catch(() => {
        throw new UnwrapError(id, context)
      })
      const plaintext =
        typeof answer['plaintext'] === 'string'
          ? Buffer.from(answer['plaintext'], 'base64')
          : undefined
      if (plaintext?.length !== 32) throw new UnwrapError(id, context)
      return plaintext
    }),
  }
}
