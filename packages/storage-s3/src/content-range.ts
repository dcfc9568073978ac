/** What a 206 answer says it sent: bytes `start` to `end` (included) of an object of `size`. */
export interface ContentRange {
  start: number
  end: number
  size: number
}

/**
 * Parses a `Content-Range: bytes start-end/size` header (RFC 9110 section 14.4), or returns
 * undefined when it is absent or has another form: that of a 416, or one of an unknown size.
 */
export function parseContentRange(header: string | undefined): ContentRange | undefined {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/i.exec(header?.trim() ?? '')
  if (match === null) return undefined
  const [start, end, size] = [match[1], match[2], match[3]].map(Number) as [number, number, number]
  if (![start, end, size].every(Number.isSafeInteger) || start > end || end >= size) {
    return undefined
  }
  return { start, end, size }
}
