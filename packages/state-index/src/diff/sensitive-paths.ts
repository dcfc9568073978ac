/**
 * The sensitive paths of one resource instance, read from its `sensitive_attributes` in a state
 * (format 4), as a tree walked alongside the instance's attributes.
 *
 * Terraform writes each path as a list of cty path steps; seen from Terraform 1.11.4 (and written
 * the same way since 0.15): `[[{"type":"get_attr","value":"input"},{"type":"get_attr","value":
 * "password"}], [{"type":"get_attr","value":"tags"},{"type":"index","value":{"value":"k","type":
 * "string"}}], [{"type":"get_attr","value":"list"},{"type":"index","value":{"value":1,"type":
 * "number"}}]]`. A set with a sensitive element is marked whole. Anything not understood errs on
 * the safe side: an unreadable list makes the whole instance sensitive, an unreadable step makes
 * the path up to it sensitive.
 */

/** One step on the way to sensitive paths. */
export interface SensitiveNode {
  /** The value here and everything below it is sensitive. */
  whole: boolean
  /** By object attribute (`get_attr`) or map key (`index` by a string). */
  readonly keys: Map<string, SensitiveNode>
  /** By list index (`index` by a number); also matches a number set's element of that value. */
  readonly indices: Map<number, SensitiveNode>
}

/** The root of an instance's sensitive paths (`whole` when everything is sensitive). */
export type SensitivePaths = SensitiveNode

/**
 * Where a walk of an instance's attributes stands among its sensitive paths: `whole` when the
 * value there is sensitive, `nodes` the paths that go on below it (none when nothing below is).
 */
export interface SensitiveCursor {
  readonly whole: boolean
  readonly nodes: readonly SensitiveNode[]
}

/**
 * Parses the raw JSON of an instance's `sensitive_attributes`. Absent or `null`: nothing is
 * sensitive. Not JSON, or not a list of paths: everything is.
 */
export function sensitivePaths(raw: string | undefined): SensitivePaths {
  const root = node()
  if (raw === undefined) return root
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    root.whole = true
    return root
  }
  if (parsed === null) return root
  if (!Array.isArray(parsed)) {
    root.whole = true
    return root
  }
  for (const path of parsed as unknown[]) addPath(root, path)
  return root
}

/** The cursor at the top of an instance's attributes. */
export function rootCursor(paths: SensitivePaths): SensitiveCursor {
  return { whole: paths.whole, nodes: hasPaths(paths) ? [paths] : [] }
}

/** Whether the value at the cursor, or anything below it, is sensitive. */
export function touchesSensitive(cursor: SensitiveCursor): boolean {
  return cursor.whole || cursor.nodes.length > 0
}

/**
 * The cursor at member `key` of the object `parent`. A dynamically typed attribute (such as
 * `terraform_data`'s `input`) is stored as `{"value": …, "type": …}` while its paths skip that
 * wrapper: its `value` matches the paths at the wrapper too, and its `type`, which names the keys
 * of the value, is sensitive when anything in the value is.
 */
export function keyCursor(
  cursor: SensitiveCursor,
  parent: Readonly<Record<string, unknown>>,
  key: string,
): SensitiveCursor {
  if (cursor.whole) return cursor
  const nodes: SensitiveNode[] = []
  for (const at of cursor.nodes) {
    const next = at.keys.get(key)
    if (next !== undefined) nodes.push(next)
  }
  if (cursor.nodes.length > 0 && isDynamicValue(parent)) {
    if (key === 'type') return { whole: true, nodes: [] }
    if (key === 'value') nodes.push(...cursor.nodes)
  }
  return cursorOf(nodes)
}

/**
 * The cursor at element `index` of the list `parent`. A path into a set names the element by its
 * value, so an element equal to a path's index (a string or number) matches it as well.
 */
export function indexCursor(
  cursor: SensitiveCursor,
  parent: readonly unknown[],
  index: number,
): SensitiveCursor {
  if (cursor.whole) return cursor
  const element = parent[index]
  const nodes: SensitiveNode[] = []
  for (const at of cursor.nodes) {
    const byIndex = at.indices.get(index)
    if (byIndex !== undefined) nodes.push(byIndex)
    const byValue =
      typeof element === 'string'
        ? at.keys.get(element)
        : typeof element === 'number' && element !== index
          ? at.indices.get(element)
          : undefined
    if (byValue !== undefined) nodes.push(byValue)
  }
  return cursorOf(nodes)
}

function cursorOf(nodes: SensitiveNode[]): SensitiveCursor {
  return { whole: nodes.some((at) => at.whole), nodes }
}

function node(): SensitiveNode {
  return { whole: false, keys: new Map(), indices: new Map() }
}

function hasPaths(at: SensitiveNode): boolean {
  return at.whole || at.keys.size > 0 || at.indices.size > 0
}

function addPath(root: SensitiveNode, path: unknown): void {
  let at = root
  if (Array.isArray(path)) {
    for (const step of path as unknown[]) {
      const next = stepInto(at, step)
      if (next === undefined) break
      at = next
    }
  }
  at.whole = true
}

/** The child for one path step, made if new; `undefined` for a step not understood. */
function stepInto(at: SensitiveNode, step: unknown): SensitiveNode | undefined {
  if (typeof step !== 'object' || step === null) return undefined
  const { type, value } = step as { type?: unknown; value?: unknown }
  let key: unknown
  if (type === 'get_attr') key = value
  else if (type === 'index') {
    // `{"value": "k", "type": "string"}`; a bare key is accepted as well.
    key = typeof value === 'object' && value !== null ? (value as { value?: unknown }).value : value
  } else return undefined
  if (typeof key === 'string') return child(at.keys, key)
  if (typeof key === 'number' && Number.isFinite(key)) return child(at.indices, key)
  // A set element named by an object's value, a bool, a null: the path stops at its parent.
  return undefined
}

function child<K>(map: Map<K, SensitiveNode>, key: K): SensitiveNode {
  let next = map.get(key)
  if (next === undefined) {
    next = node()
    map.set(key, next)
  }
  return next
}

/** Whether an object is cty's JSON of a dynamically typed value: exactly `value` and `type`. */
export function isDynamicValue(value: Readonly<Record<string, unknown>>): boolean {
  const keys = Object.keys(value)
  if (keys.length !== 2 || !Object.hasOwn(value, 'value') || !Object.hasOwn(value, 'type')) {
    return false
  }
  const type = value['type']
  return typeof type === 'string' || Array.isArray(type)
}
