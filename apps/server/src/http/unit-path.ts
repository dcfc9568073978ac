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

const VERSION_RESOURCES = /^(.+)\/versions\/([^/]+)\/resources$/

/**
 * `/v1/units/{id}/versions/{timestamp}/resources` (or `.../versions/current/resources`) taken
 * apart: the unit and the version, `current` for the current one. Undefined for any other path.
 * Such a path always names this route, even for a unit whose ID would end that way.
 *
 * @throws InvalidUnitIdError
 */
export function parseVersionResourcesPath(
  rawPath: string,
  prefix: string,
): { id: UnitId; version: string } | undefined {
  const match = VERSION_RESOURCES.exec(rawPath.slice(prefix.length).replace(/\/+$/, ''))
  if (match === null) return undefined
  return { id: unitIdFromPath(match[1] as string), version: decodeURIComponent(match[2] as string) }
}
