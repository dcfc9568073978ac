import type { Resource } from '@cairn/contract'
import type { IndexedInstance, IndexedOutput, ResourceIndex } from '../stored-index/resource-index'

/**
 * What differs between two resource indexes: instances by address (and deposed key), outputs by
 * name. Changed entries carry both sides, so a caller can read each one's attributes for detail.
 */
export interface IndexDiff {
  added: IndexedInstance[]
  removed: IndexedInstance[]
  changed: { before: IndexedInstance; after: IndexedInstance }[]
  outputs: {
    added: IndexedOutput[]
    removed: IndexedOutput[]
    changed: { before: IndexedOutput; after: IndexedOutput }[]
  }
  /** Either index stopped at its limit, so instances past it were not compared. */
  truncated: boolean
}

/**
 * The order of instances in an index: by address, then the current object before its deposed
 * ones, by deposed key. Plain code-unit order (not `localeCompare`), so it is the same everywhere;
 * whatever builds an index sorts with this.
 */
export function compareInstances(a: IndexedInstance, b: IndexedInstance): number {
  return compareStrings(a.address, b.address) || compareStrings(a.deposed ?? '', b.deposed ?? '')
}

/** The order of outputs in an index: by name, in code-unit order. */
export function compareOutputs(a: IndexedOutput, b: IndexedOutput): number {
  return compareStrings(a.name, b.name)
}

/**
 * Compares two versions' indexes, the earlier one `null` when there is none (everything is then
 * added). An instance is changed when its attributes' digest or its provider differs; an output
 * when its digest or its sensitivity does. Both lists are walked together once, as they are sorted
 * (`compareInstances`), so 100k instances cost no map; a list found out of order is sorted first.
 */
export function diffIndexes(before: ResourceIndex | null, after: ResourceIndex): IndexDiff {
  const instances = mergeWalk(
    before?.resources ?? [],
    after.resources,
    compareInstances,
    (b, a) => b.digest !== a.digest || b.provider !== a.provider,
  )
  const outputs = mergeWalk(
    before?.outputs ?? [],
    after.outputs,
    compareOutputs,
    (b, a) => b.digest !== a.digest || b.sensitive !== a.sensitive,
  )
  return { ...instances, outputs, truncated: (before?.truncated ?? false) || after.truncated }
}

/** An instance as answers show it: its index entry without the digest of its attributes. */
export function toResource(instance: IndexedInstance): Resource {
  const resource: Resource = {
    address: instance.address,
    module: instance.module,
    mode: instance.mode,
    type: instance.type,
    name: instance.name,
    provider: instance.provider,
    identity: instance.identity,
  }
  if (instance.index_key !== undefined) resource.index_key = instance.index_key
  if (instance.deposed !== undefined) resource.deposed = instance.deposed
  return resource
}

interface Walked<T> {
  added: T[]
  removed: T[]
  changed: { before: T; after: T }[]
}

function mergeWalk<T>(
  beforeList: readonly T[],
  afterList: readonly T[],
  compare: (a: T, b: T) => number,
  differs: (before: T, after: T) => boolean,
): Walked<T> {
  const before = inOrder(beforeList, compare)
  const after = inOrder(afterList, compare)
  const walked: Walked<T> = { added: [], removed: [], changed: [] }
  let i = 0
  let j = 0
  while (i < before.length && j < after.length) {
    const b = before[i] as T
    const a = after[j] as T
    const order = compare(b, a)
    if (order < 0) {
      walked.removed.push(b)
      i++
    } else if (order > 0) {
      walked.added.push(a)
      j++
    } else {
      if (differs(b, a)) walked.changed.push({ before: b, after: a })
      i++
      j++
    }
  }
  for (; i < before.length; i++) walked.removed.push(before[i] as T)
  for (; j < after.length; j++) walked.added.push(after[j] as T)
  return walked
}

/**
 * The list itself when it is in order, which an index always is; otherwise a sorted copy, since a
 * merge walk over an unsorted list would report a kept instance as removed and added.
 */
function inOrder<T>(list: readonly T[], compare: (a: T, b: T) => number): readonly T[] {
  for (let k = 1; k < list.length; k++) {
    if (compare(list[k - 1] as T, list[k] as T) > 0) return [...list].sort(compare)
  }
  return list
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
