/**
 * Sorted lists of strings kept as one joined string and the offsets of its parts, searched by
 * binary search: far less memory than an array of strings, each with its own header.
 *
 * @internal
 */

/** Compares strings by UTF-16 code units, as `<` does (and as `Array.prototype.sort` by default). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** The first index in `[0, n)` where `predicate` holds, given it holds from some index on; or n. */
export function firstIndex(n: number, predicate: (i: number) => boolean): number {
  let low = 0
  let high = n
  while (low < high) {
    const mid = (low + high) >>> 1
    if (predicate(mid)) high = mid
    else low = mid + 1
  }
  return low
}

/** Joins strings into one, with the offset where each ends (`ends[i + 1]`; `ends[0]` is 0). */
export function joinStrings(strings: readonly string[]): [string, Uint32Array] {
  const ends = new Uint32Array(strings.length + 1)
  let at = 0
  strings.forEach((s, i) => {
    at += s.length
    ends[i + 1] = at
  })
  return [strings.join(''), ends]
}

/** Compares the i-th string of a joined list with q, code unit by code unit, without slicing. */
export function compareAt(joined: string, ends: Uint32Array, i: number, q: string): number {
  const start = ends[i] as number
  const length = (ends[i + 1] as number) - start
  const common = Math.min(length, q.length)
  for (let c = 0; c < common; c += 1) {
    const d = joined.charCodeAt(start + c) - q.charCodeAt(c)
    if (d !== 0) return d
  }
  return length - q.length
}

/** Whether the i-th string of a joined list starts with q. */
export function startsWithAt(joined: string, ends: Uint32Array, i: number, q: string): boolean {
  const start = ends[i] as number
  if ((ends[i + 1] as number) - start < q.length) return false
  return joined.startsWith(q, start)
}
