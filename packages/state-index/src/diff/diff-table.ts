import type { IndexedInstance } from '../stored-index/resource-index'
import { IndexReader, parseEntry, type IndexRest } from '../stored-index/index-entries'

/** What became of an entry once two indexes are matched. */
export const ADDED = 1
export const REMOVED = 2
export const CHANGED = 3
export const SAME = 4

/**
 * One index as a diff holds it: for each entry, in the stored order, a 64-bit hash of its key
 * (address and deposed key) and one of what a change is told by (the attributes' digest and the
 * provider), and once matched, what became of it. About 21 bytes an entry (5 MiB for the 250,000
 * an index holds at most), where the entries themselves as objects would take a hundred times
 * that; the entries are read again, as bytes, when they are listed.
 *
 * Two different keys share a hash with odds of about one in 2^64 per pair, as two different
 * attributes share a digest (`AttributesDigest`).
 */
export class DiffTable {
  size = 0
  keys = new Uint32Array(2 * 1024)
  values = new Uint32Array(2 * 1024)
  state = new Uint8Array(1024)
  rest: IndexRest | undefined

  /**
   * Reads an index whole, keeping only the hashes. @throws UnreadableIndexError, ReadAbortedError
   */
  static async read(bytes: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<DiffTable> {
    const table = new DiffTable()
    const reader = new IndexReader(bytes, signal)
    for await (const batch of reader.batches()) {
      for (const entry of batch) table.add(parseEntry(entry))
    }
    table.rest = reader.rest
    return table
  }

  /** An empty table: the index of no version (a unit's first version is all added). */
  static empty(rest: IndexRest): DiffTable {
    const table = new DiffTable()
    table.rest = rest
    return table
  }

  add(instance: IndexedInstance): void {
    if (this.size === this.state.length) this.#grow()
    const at = this.size
    hashInto(this.keys, 2 * at, `${instance.address}\u0000${instance.deposed ?? ''}`)
    hashInto(this.values, 2 * at, `${instance.digest}\u0000${instance.provider}`)
    this.size += 1
  }

  /** How many entries are in `state`, from `from` on. */
  countFrom(state: number, from: number): number {
    let count = 0
    for (let at = from; at < this.size; at += 1) if (this.state[at] === state) count += 1
    return count
  }

  /** Whether any entry from `from` on is in `state`. */
  anyFrom(state: number, from: number): boolean {
    for (let at = from; at < this.size; at += 1) if (this.state[at] === state) return true
    return false
  }

  #grow(): void {
    const size = this.state.length * 2
    const keys = new Uint32Array(2 * size)
    keys.set(this.keys)
    const values = new Uint32Array(2 * size)
    values.set(this.values)
    const state = new Uint8Array(size)
    state.set(this.state)
    this.keys = keys
    this.values = values
    this.state = state
  }
}

/**
 * Matches the entries of two indexes by key and marks each: in `after`, `ADDED`, `CHANGED` or
 * `SAME`; in `before`, `REMOVED`, `CHANGED` or `SAME`. A key given more than once (a state
 * repeating an address) is matched in the stored order, the first with the first. Answers how
 * many are added, removed and changed.
 */
export function matchTables(
  before: DiffTable,
  after: DiffTable,
): { added: number; removed: number; changed: number } {
  const order = new Uint32Array(before.size)
  for (let at = 0; at < order.length; at += 1) order[at] = at
  const keys = before.keys
  order.sort((a, b) => compareKeys(keys, 2 * a, keys, 2 * b) || a - b)
  before.state.fill(REMOVED, 0, before.size)
  let added = 0
  let changed = 0
  for (let at = 0; at < after.size; at += 1) {
    const match = firstUnmatched(before, order, after.keys, 2 * at)
    if (match === -1) {
      after.state[at] = ADDED
      added += 1
      continue
    }
    const same =
      before.values[2 * match] === after.values[2 * at] &&
      before.values[2 * match + 1] === after.values[2 * at + 1]
    after.state[at] = same ? SAME : CHANGED
    before.state[match] = same ? SAME : CHANGED
    if (!same) changed += 1
  }
  return { added, removed: before.countFrom(REMOVED, 0), changed }
}

/** The first entry of `before` with the key at `at` of `keys` not matched yet, or -1. */
function firstUnmatched(
  before: DiffTable,
  order: Uint32Array,
  keys: Uint32Array,
  at: number,
): number {
  let low = 0
  let high = order.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (compareKeys(before.keys, 2 * (order[middle] as number), keys, at) < 0) low = middle + 1
    else high = middle
  }
  for (let k = low; k < order.length; k += 1) {
    const entry = order[k] as number
    if (compareKeys(before.keys, 2 * entry, keys, at) !== 0) return -1
    if (before.state[entry] === REMOVED) return entry
  }
  return -1
}

function compareKeys(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  return (a[i] as number) - (b[j] as number) || (a[i + 1] as number) - (b[j + 1] as number)
}

/**
 * Two 32-bit hashes of a string's UTF-16 units (cyrb53's mixing, both halves kept) written at
 * `at` and `at + 1`.
 */
function hashInto(out: Uint32Array, at: number, text: string): void {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let k = 0; k < text.length; k += 1) {
    const c = text.charCodeAt(k)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  out[at] = h1 >>> 0
  out[at + 1] = h2 >>> 0
}
