import { collectBytes, listAllKeys, PreconditionFailedError, type ObjectStore } from '@cairn/core'
import { EncryptingStore } from './encrypting-store'
import { KeySetupError, type KeyEncryptionKey } from './keys'

/**
 * Each key-encryption key that has ever encrypted in this store leaves a canary under
 * `encryption/keks/<id>`, written under it before anything else is: so a start can tell which
 * KEKs the store holds objects under, and whether the key given for an ID is the one it was.
 */
export const CANARY_PREFIX = 'encryption/keks/'
const CANARY_TEXT = 'cairn encryption canary'

/**
 * Checks the keys against the store before anything is served: every KEK the store holds objects
 * under must be listed and open its canary; the first KEK's canary is written if it is new
 * (unless `readOnly`: a reader of the store, such as an offline export, writes nothing).
 *
 * @throws KeySetupError in one line naming the key
 */
export async function checkKeys(
  store: ObjectStore,
  keys: readonly KeyEncryptionKey[],
  options: { readOnly?: boolean } = {},
): Promise<void> {
  const [current] = keys
  if (current === undefined) throw new KeySetupError('-encryption-keys names no key')
  const opener = (kek: KeyEncryptionKey) =>
    new EncryptingStore(store, [kek], {}, { encrypts: () => true })
  for await (const key of listAllKeys(store, CANARY_PREFIX)) {
    const id = key.slice(CANARY_PREFIX.length)
    const kek = keys.find((each) => each.id === id)
    if (kek === undefined) {
      throw new KeySetupError(
        `the store holds objects encrypted under key-encryption key ${id}, which -encryption-keys does not list: list it (after the current key) until a rewrap has moved them`,
      )
    }
    let text: string | undefined
    try {
      const read = await opener(kek).get(key)
      text = read === undefined ? undefined : Buffer.from(await collectBytes(read.body)).toString()
    } catch {
      text = undefined
    }
    if (text !== CANARY_TEXT) {
      throw new KeySetupError(
        `key-encryption key ${id} does not open what the store holds under ${id}: is it the key it was written with?`,
      )
    }
  }
  if (options.readOnly === true) return
  try {
    await opener(current).put(`${CANARY_PREFIX}${current.id}`, Buffer.from(CANARY_TEXT), {
      condition: { ifNoneMatch: '*' },
    })
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error
  }
}
