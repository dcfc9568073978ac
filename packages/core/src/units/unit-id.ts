import { InvalidUnitIdError } from '../errors'

/** A validated unit ID: a natural path such as `team/app/prod`. */
export type UnitId = string & { readonly __unitId: unique symbol }

/** The longest unit ID accepted, in characters. */
export const MAX_UNIT_ID_LENGTH = 512

/**
 * The longest segment accepted. Each segment becomes a folder name in the `fs` store, and file
 * systems cap names at 255 bytes; one limit for every driver keeps a unit portable between them.
 */
export const MAX_SEGMENT_LENGTH = 200

/**
 * Path words that follow a unit ID in `/v1/units/{id}/<word>` routes. A unit's last segment may not
 * be one of them, so that a path always parses one way.
 */
export const ROUTE_WORDS: ReadonlySet<string> = new Set([
  'download',
  'upload',
  'lock',
  'unlock',
  'status',
  'versions',
  'restore',
  'dependencies',
  'outputs',
  'diff',
  'history',
])

const SEGMENT = /^[A-Za-z0-9._~:@+=-]+$/

/**
 * Checks a natural-path unit ID and returns it typed.
 *
 * @throws InvalidUnitIdError (`invalid_unit_id`) naming the rule it breaks.
 */
export function parseUnitId(id: string): UnitId {
  if (id.length === 0) throw new InvalidUnitIdError(id, 'it is empty')
  if (id.length > MAX_UNIT_ID_LENGTH) {
    throw new InvalidUnitIdError(id, `it is longer than ${MAX_UNIT_ID_LENGTH} characters`)
  }
  const segments = id.split('/')
  for (const segment of segments) {
    if (segment === '') {
      throw new InvalidUnitIdError(
        id,
        'segments must not be empty (no leading, trailing or double /)',
      )
    }
    if (segment.length > MAX_SEGMENT_LENGTH) {
      throw new InvalidUnitIdError(id, `segments must be at most ${MAX_SEGMENT_LENGTH} characters`)
    }
    if (segment === '.' || segment === '..') {
      throw new InvalidUnitIdError(id, 'segments must not be . or ..')
    }
    if (!SEGMENT.test(segment)) {
      throw new InvalidUnitIdError(id, 'segments may contain only A-Z a-z 0-9 . _ - ~ : @ + =')
    }
    // `__` is how a slash is written in a single URL segment, so it cannot also be a character.
    if (segment.includes('__')) {
      throw new InvalidUnitIdError(id, 'segments must not contain __')
    }
  }
  const last = segments[segments.length - 1] ?? ''
  if (ROUTE_WORDS.has(last)) {
    throw new InvalidUnitIdError(id, `the last segment must not be the route word "${last}"`)
  }
  return id as UnitId
}

/**
 * Reads a unit ID as it appears in a URL path: the natural path (`team/app/prod`), the
 * double-underscore form (`team__app__prod`) or the percent-encoded form (`team%2Fapp%2Fprod`),
 * in any mix. `raw` is the undecoded path after the route prefix.
 *
 * @throws InvalidUnitIdError when the result is not a valid unit ID.
 */
export function unitIdFromPath(raw: string): UnitId {
  let decoded: string
  try {
    decoded = raw
      .split('/')
      .map((part) => decodeURIComponent(part))
      .join('/')
  } catch {
    throw new InvalidUnitIdError(raw, 'it is not valid percent-encoding')
  }
  return parseUnitId(decoded.replaceAll('__', '/'))
}

/** The single-segment form of an ID, for clients that cannot put `/` in a path segment. */
export function unitIdToSegment(id: UnitId): string {
  return id.replaceAll('/', '__')
}
