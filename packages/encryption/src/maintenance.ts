import { createHash } from 'node:crypto'
import { PreconditionFailedError, type ObjectInfo, type ObjectStore } from '@cairn/core'
import { CANARY_PREFIX } from './key-check'
import type { EncryptingStore } from './encrypting-store'
export type { ObjectState } from './encrypting-store'

/** A page of `status`: how many objects are plain, and how many under each KEK. */
export interface StatusPage {
  plain: number
  byKek: Record<string, number>
  /** The key to go on after, or null at the end. */
  nextCursor: string | null
}

/** A page of `encrypt-existing` or `rewrap`. */
export interface RewritePage {
  examined: number
  rewritten: number
  /** Objects already as wanted, or changed by a writer meanwhile (written under the current KEK). */
  skipped: number
  nextCursor: string | null
  /** KEKs whose canaries were removed at the end of a rewrap: nothing is left under them. */
  retired: string[]
}

export type RewriteMode = 'encrypt-existing' | 'rewrap'

/**
 * `cairn admin encryption status|encrypt-existing|rewrap` (DESIGN section 15), a page at a time
 * so a caller can go on where it stopped: every object is rewritten by one conditional write on
 * the ETag it was read at (a writer meanwhile wins, and wrote under the current KEK), then read
 * back and compared with what was read, so `kill -9` at any moment leaves each object whole,
 * old or new.
 */
export class EncryptionMaintenance {
  readonly #store: EncryptingStore
  readonly #inner: ObjectStore

  constructor(store: EncryptingStore, inner: ObjectStore) {
    this.#store = store
    this.#inner = inner
  }

  get currentKek(): string {
    return this.#store.currentKek
  }

  /** The keys this page covers: those under the encrypted prefixes, after `cursor`. */
  async #page(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ objects: ObjectInfo[]; next: string | null }> {
    const page = await this.#inner.list({
      prefix: '',
      limit,
      ...(cursor === undefined ? {} : { startAfter: cursor }),
    })
    const last = page.objects.at(-1)?.key
    return {
      objects: page.objects.filter((object) => this.#store.encryptsKey(object.key)),
      next: page.cursor === undefined || last === undefined ? null : last,
    }
  }

  async status(cursor?: string, limit = 1000): Promise<StatusPage> {
    const { objects, next } = await this.#page(cursor, limit)
    const page: StatusPage = { plain: 0, byKek: {}, nextCursor: next }
    for (const { key, size } of objects) {
      const state = await this.#store.stateOf(key, size)
      if (state === undefined) continue
      if (state.kind === 'plain') page.plain += 1
      else page.byKek[state.kek] = (page.byKek[state.kek] ?? 0) + 1
    }
    return page
  }

  async rewrite(mode: RewriteMode, cursor?: string, limit = 200): Promise<RewritePage> {
    const { objects, next } = await this.#page(cursor, limit)
    const page: RewritePage = {
      examined: 0,
      rewritten: 0,
      skipped: 0,
      nextCursor: next,
      retired: [],
    }
    const current = this.#store.currentKek
    for (const { key, size } of objects) {
      page.examined += 1
      const state = await this.#store.stateOf(key, size)
      const wanted =
        state !== undefined &&
        (mode === 'encrypt-existing'
          ? state.kind === 'plain'
          : state.kind === 'encrypted' && state.kek !== current)
      if (!wanted) {
        page.skipped += 1
        continue
      }
      if (await this.#rewriteOne(key)) page.rewritten += 1
      else page.skipped += 1
    }
    if (next === null && mode === 'rewrap') page.retired = await this.#retireCanaries()
    return page
  }

  /** Reads, rewrites under the current KEK on the ETag read, reads back and compares. */
  async #rewriteOne(key: string): Promise<boolean> {
    const read = await this.#store.get(key)
    if (read === undefined) return false
    const before = createHash('sha256')
    async function* hashed(): AsyncGenerator<Uint8Array> {
      for await (const chunk of read?.body ?? []) {
        before.update(chunk)
        yield chunk
      }
    }
    try {
      await this.#store.put(key, hashed(), {
        condition: { ifMatch: read.etag },
        forceEncrypt: true,
      })
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
    const back = await this.#store.get(key)
    const after = createHash('sha256')
    for await (const chunk of back?.body ?? []) after.update(chunk)
    const expected = before.digest('hex')
    if (after.digest('hex') !== expected) {
      throw new Error(
        `${key} did not read back as written after its rewrite: stopped; nothing else was rewritten`,
      )
    }
    return true
  }

  /** Removes the canaries of KEKs no object is under any more, after a whole rewrap. */
  async #retireCanaries(): Promise<string[]> {
    const counts: Record<string, number> = {}
    for (let cursor: string | undefined, more = true; more;) {
      const page = await this.status(cursor)
      for (const [kek, count] of Object.entries(page.byKek))
        counts[kek] = (counts[kek] ?? 0) + count
      cursor = page.nextCursor ?? undefined
      more = page.nextCursor !== null
    }
    const retired: string[] = []
    const listed = await this.#inner.list({ prefix: CANARY_PREFIX })
    for (const { key } of listed.objects) {
      const kek = key.slice(CANARY_PREFIX.length)
      if (kek === this.#store.currentKek || (counts[kek] ?? 0) > 0) continue
      await this.#inner.delete(key)
      retired.push(kek)
    }
    return retired
  }
}
