import { ROUTE_WORDS, unitIdFromPath, type UnitId } from '@cairn/core'

/** A `/v1/units/{id}[/<word>]` path taken apart. */
export interface UnitPath {
  id: UnitId
  /** The route word after the ID (`lock`, `versions`, ...), or undefined for the unit itself. */
  action: string | undefined
}

/**
 * Splits the undecoded path after a route prefix into a unit ID and an optional route word. The
 * word is matched before decoding, so `a%2Flock` is the unit `a/lock` (refused: a route word may
 * not end an ID) and never the action `lock` on `a`.
 *
 * @throws InvalidUnitIdError
 */
export function parseUnitPath(rawPath: string, prefix: string): UnitPath {
  const rest = rawPath.slice(prefix.length).replace(/\/+$/, '')
  const cut = rest.lastIndexOf('/')
  const last = cut === -1 ? undefined : rest.slice(cut + 1)
  if (last !== undefined && ROUTE_WORDS.has(last)) {
    return { id: unitIdFromPath(rest.slice(0, cut)), action: last }
  }
  return { id: unitIdFromPath(rest), action: undefined }
}

/** The path of a request as sent, without decoding (so `%2F` stays distinct from `/`). */
export function rawPathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const end = url.search(/[?#]/)
  return url.slice(start, end === -1 ? undefined : end)
}
