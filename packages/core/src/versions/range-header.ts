import type { ByteRange } from '../storage/object-store'

/**
 * Reads an HTTP `Range` header (RFC 9110 section 14.1.2) against a representation of `size`
 * bytes, for a server that serves one range at a time:
 *
 * - `bytes=a-b` is bytes a to b, b cut to the last byte; `bytes=a-` is a to the end; `bytes=-n` is
 *   the last n bytes, or all of them when there are fewer.
 * - `'unsatisfiable'` (answer 416) when the first byte is at or past the end, or the suffix length
 *   is 0 (section 14.1.2: no such range-spec is satisfiable).
 * - undefined when the header is to be ignored and the whole representation sent (section 14.2
 *   lets a server ignore any Range header): another unit, several ranges, a last byte before the
 *   first, anything not in the grammar. Also for a suffix range of an empty representation, whose
 *   "entire representation" is no range of bytes at all.
 */
export function parseRangeHeader(
  header: string,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  // ranges-specifier = range-unit "=" range-set; range units are case-insensitive (14.1).
  const match = /^bytes=(.*)$/i.exec(header.trim())
  if (match === null) return undefined
  // range-set = 1#range-spec; a list may hold empty elements, which a recipient skips (5.6.1).
  const specs = (match[1] ?? '')
    .split(',')
    .map((spec) => spec.trim())
    .filter((spec) => spec !== '')
  if (specs.length !== 1) return undefined
  const spec = /^(\d*)-(\d*)$/.exec(specs[0] ?? '')
  if (spec === null) return undefined
  const [first, last] = [spec[1] ?? '', spec[2] ?? '']
  const total = BigInt(size)
  if (first === '') {
    // suffix-range = "-" suffix-length
    if (last === '') return undefined
    const length = BigInt(last)
    if (length === 0n) return 'unsatisfiable'
    if (total === 0n) return undefined
    return { start: Number(length >= total ? 0n : total - length), end: size - 1 }
  }
  // int-range = first-pos "-" [ last-pos ], read as BigInt so any run of digits compares exactly.
  const start = BigInt(first)
  if (last !== '' && BigInt(last) < start) return undefined
  if (start >= total) return 'unsatisfiable'
  const end = last === '' || BigInt(last) >= total ? total - 1n : BigInt(last)
  return { start: Number(start), end: Number(end) }
}
