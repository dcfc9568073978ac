/** A query decoded into names and values; a repeated name keeps every value, in order. */
export type QueryMap = Record<string, string | string[]>

/**
 * Percent-decodes one query or path component. '+' stays '+': SigV4 clients encode a space as %20,
 * and the canonical form re-encodes what the client meant, so reading '+' as a space would break
 * a signature over a literal plus. A malformed escape is kept as sent (it then re-encodes as %25).
 */
export function decodeComponent(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** Splits a raw query string (without '?') into decoded names and values. `a` alone is `a=`. */
export function parseQuery(raw: string): QueryMap {
  // No prototype: a parameter named __proto__ or constructor is a parameter like any other.
  const query = Object.create(null) as QueryMap
  if (raw === '') return query
  for (const pair of raw.split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq))
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1))
    const previous = Object.hasOwn(query, name) ? query[name] : undefined
    if (previous === undefined) query[name] = value
    else if (Array.isArray(previous)) previous.push(value)
    else query[name] = [previous, value]
  }
  return query
}

/** The only value of a parameter; undefined when absent, or when sent more than once. */
export function singleValue(query: QueryMap, name: string): string | undefined {
  const value = Object.hasOwn(query, name) ? query[name] : undefined
  return typeof value === 'string' ? value : undefined
}
