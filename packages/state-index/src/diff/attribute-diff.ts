import { InvalidStateError, outputNamed, type StateOutput } from '@cairn/core'
import type { AttributeChange, OutputChange } from '@cairn/contract'
import type { IndexDiff } from './index-diff'
import {
  indexCursor,
  isDynamicValue,
  keyCursor,
  rootCursor,
  sensitivePaths,
  touchesSensitive,
  type SensitiveCursor,
} from './sensitive-paths'
import { SENSITIVE, shownValue } from './shown-value'

/** One version of a resource instance, as its state holds it: raw JSON texts. */
export interface RawInstance {
  /** The instance's `attributes`. */
  attributes: string
  /** The instance's `sensitive_attributes`, when it has them. */
  sensitive?: string | undefined
}

/** The outputs of a diff with their values (`OutputChangeSchema`). */
export interface OutputChanges {
  added: OutputChange[]
  removed: OutputChange[]
  changed: OutputChange[]
}

/**
 * Each attribute that differs between two versions of an instance, by path in the order walked
 * (object keys sorted, list elements by index). Objects are compared key by key and lists element
 * by element; any other difference (a value, a type, a member new or gone) is one change, its
 * `before` absent when new and `after` absent when gone.
 *
 * A value sensitive in either version, or a whole object or list with anything sensitive in it, is
 * `(sensitive)` on each side, and a sensitive object is one change at its own path, its keys
 * unshown. A string that is a sensitive value elsewhere in either version is `(sensitive)` too:
 * Terraform marks only where a value was made sensitive (`terraform_data`'s `output` holds its
 * `input`'s secrets unmarked). Strings over 1024 characters are cut.
 *
 * @throws InvalidStateError when either `attributes` is not JSON
 */
export function attributeChanges(before: RawInstance, after: RawInstance): AttributeChange[] {
  const beforeValue = parseAttributes(before.attributes)
  const afterValue = parseAttributes(after.attributes)
  const beforeCursor = rootCursor(sensitivePaths(before.sensitive))
  const afterCursor = rootCursor(sensitivePaths(after.sensitive))
  const hidden = new Set<string>()
  collectSecrets(beforeValue, beforeCursor, hidden)
  collectSecrets(afterValue, afterCursor, hidden)
  hidden.delete('')
  const changes: AttributeChange[] = []
  compare('', beforeValue, afterValue, beforeCursor, afterCursor, { changes, hidden })
  return changes
}

/**
 * The outputs of an index diff with their values from each version's parsed outputs (`null` when
 * not read: no values are shown then). An output sensitive in either version shows `(sensitive)`
 * and says `sensitive: true`.
 */
export function outputChanges(
  diff: IndexDiff['outputs'],
  before: Readonly<Record<string, StateOutput>> | null,
  after: Readonly<Record<string, StateOutput>> | null,
): OutputChanges {
  return {
    added: diff.added.map((output) => outputChange(output.name, output.sensitive, null, after)),
    removed: diff.removed.map((output) =>
      outputChange(output.name, output.sensitive, before, null),
    ),
    changed: diff.changed.map((pair) =>
      outputChange(pair.after.name, pair.before.sensitive || pair.after.sensitive, before, after),
    ),
  }
}

function outputChange(
  name: string,
  indexedSensitive: boolean,
  before: Readonly<Record<string, StateOutput>> | null,
  after: Readonly<Record<string, StateOutput>> | null,
): OutputChange {
  const was = before === null ? undefined : outputNamed(before, name)
  const is = after === null ? undefined : outputNamed(after, name)
  const sensitive = indexedSensitive || was?.sensitive === true || is?.sensitive === true
  const change: OutputChange = { name, sensitive }
  if (was !== undefined) change.before = sensitive ? SENSITIVE : shownValue(was.value)
  if (is !== undefined) change.after = sensitive ? SENSITIVE : shownValue(is.value)
  return change
}

// The walks below recurse once a level: the attributes they read nest at most `MAX_STATE_DEPTH`
// levels, since the scanner refuses a deeper state, whether it is written or read back.

/** Marks a member missing on one side; `undefined` cannot, as it is no JSON value. */
const ABSENT: unique symbol = Symbol('absent')

interface Walk {
  changes: AttributeChange[]
  hidden: ReadonlySet<string>
}

function compare(
  path: string,
  before: unknown,
  after: unknown,
  beforeCursor: SensitiveCursor,
  afterCursor: SensitiveCursor,
  walk: Walk,
): void {
  const sensitive = beforeCursor.whole || afterCursor.whole
  // Top-level attribute names come from the provider's schema, never from a value: even an
  // instance sensitive whole is compared attribute by attribute.
  if (!sensitive || path === '') {
    if (isObject(before) && isObject(after)) {
      for (const key of sortedKeys(before, after)) {
        compare(
          memberPath(path, key),
          Object.hasOwn(before, key) ? before[key] : ABSENT,
          Object.hasOwn(after, key) ? after[key] : ABSENT,
          keyCursor(beforeCursor, before, key),
          keyCursor(afterCursor, after, key),
          walk,
        )
      }
      return
    }
    if (Array.isArray(before) && Array.isArray(after)) {
      const length = Math.max(before.length, after.length)
      for (let index = 0; index < length; index++) {
        compare(
          `${path}[${index}]`,
          index < before.length ? before[index] : ABSENT,
          index < after.length ? after[index] : ABSENT,
          indexCursor(beforeCursor, before, index),
          indexCursor(afterCursor, after, index),
          walk,
        )
      }
      return
    }
  }
  if (before !== ABSENT && after !== ABSENT && deepEqual(before, after)) return
  // A whole value shown (a leaf, a new or gone member, a type change) hides everything when any
  // part of it, on either side, is sensitive.
  const hide = touchesSensitive(beforeCursor) || touchesSensitive(afterCursor)
  const change: AttributeChange = { path }
  if (before !== ABSENT) change.before = hide ? SENSITIVE : shownValue(before, walk.hidden)
  if (after !== ABSENT) change.after = hide ? SENSITIVE : shownValue(after, walk.hidden)
  walk.changes.push(change)
}

/** Adds every string found at a sensitive path of `value` to `into`. */
function collectSecrets(value: unknown, cursor: SensitiveCursor, into: Set<string>): void {
  if (cursor.whole) {
    collectStrings(value, into)
    return
  }
  if (cursor.nodes.length === 0) return
  if (Array.isArray(value)) {
    value.forEach((element: unknown, index) => {
      collectSecrets(element, indexCursor(cursor, value, index), into)
    })
  } else if (isObject(value)) {
    // A dynamic value's `type` is hidden for what it tells of the value, but holds no value.
    const dynamic = isDynamicValue(value)
    for (const [key, member] of Object.entries(value)) {
      if (dynamic && key === 'type') continue
      collectSecrets(member, keyCursor(cursor, value, key), into)
    }
  }
}

function collectStrings(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') into.add(value)
  else if (Array.isArray(value)) for (const element of value) collectStrings(element, into)
  else if (isObject(value)) for (const member of Object.values(value)) collectStrings(member, into)
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** `tags.Name` for an identifier, `triggers["a b"]` for any other key. */
function memberPath(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`
  return path === '' ? key : `${path}.${key}`
}

function sortedKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = Object.keys(a)
  for (const key of Object.keys(b)) if (!Object.hasOwn(a, key)) keys.push(key)
  return keys.sort()
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    return a.every((element: unknown, index) => deepEqual(element, b[index]))
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    if (keys.length !== Object.keys(b).length) return false
    return keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  }
  return false
}

function parseAttributes(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown
  } catch {
    throw new InvalidStateError('resource instance attributes are not JSON')
  }
}
