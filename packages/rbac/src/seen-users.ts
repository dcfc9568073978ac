import { createHash } from 'node:crypto'
import * as v from 'valibot'
import {
  iso,
  listAllKeys,
  mapLimit,
  readRecord,
  STORE_KEYS,
  writeRecord,
  type Clock,
  type ObjectStore,
  type Principal,
} from '@cairn/core'

/** A user seen at login: `rbac/users/<hash>.json`. */
export const SeenUserSchema = v.object({
  subject: v.string(),
  issuer: v.optional(v.string()),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  first_seen: v.string(),
  last_seen: v.string(),
})
export type SeenUser = v.InferOutput<typeof SeenUserSchema>

/** Who a seen user is: a subject, from an issuer. */
export interface UserName {
  subject: string
  issuer?: string | undefined
}

const READ_CONCURRENCY = 16

/**
 * The users seen at login, one record each, with what their last login said of them (email,
 * groups) and when it was. Administrators list them; the identity side reads a user's record to
 * give API tokens the groups of their owner's last login rather than those of the day they were
 * made.
 */
export class SeenUsers {
  readonly #store: ObjectStore
  readonly #clock: Clock

  constructor(store: ObjectStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** Notes a login: what it said of the user replaces what the last one said. */
  async record(principal: Principal): Promise<void> {
    const key = keyOf(principal)
    const now = iso(this.#clock.now())
    const previous = await readRecord(this.#store, key, SeenUserSchema)
    const user: SeenUser = {
      subject: principal.subject,
      ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
      ...(principal.email === undefined ? {} : { email: principal.email }),
      groups: [...(principal.groups ?? [])],
      first_seen: previous?.value.first_seen ?? now,
      last_seen: now,
    }
    await writeRecord(this.#store, key, user)
  }

  /** The user's record, or undefined when they never signed in (or were removed). */
  async get(name: UserName): Promise<SeenUser | undefined> {
    return (await readRecord(this.#store, keyOf(name), SeenUserSchema))?.value
  }

  /** Every user seen, in no particular order. */
  async list(): Promise<SeenUser[]> {
    const keys: string[] = []
    for await (const key of listAllKeys(this.#store, STORE_KEYS.rbacUsers)) keys.push(key)
    const users = await mapLimit(
      keys,
      READ_CONCURRENCY,
      async (key) => (await readRecord(this.#store, key, SeenUserSchema))?.value,
    )
    return users.filter((user): user is SeenUser => user !== undefined)
  }

  /** Forgets a user: they are listed again only after their next login. */
  async remove(name: UserName): Promise<void> {
    await this.#store.delete(keyOf(name))
  }
}

/** The record's key: a hash of issuer and subject, so any subject makes a safe key. */
function keyOf(name: UserName): string {
  const hash = createHash('sha256')
    .update(`${name.issuer ?? ''}\n${name.subject}`)
    .digest('base64url')
  return `${STORE_KEYS.rbacUsers}${hash}.json`
}
