import type { ObjectStore, StagePart } from '@cairn/core'
import { IndexStream, NoIndex } from './index-stream'
import { INDEX_FIELD, indexKeyOf, type IndexRef } from './resource-index'

/**
 * How much of a streamed index is written between flushes to disk: an index is some 7 % of its
 * state's size, and what is left unflushed when the body ends is made durable before the answer.
 */
const INDEX_FLUSH_EVERY = 1024 * 1024

/**
 * The index's part in staging a state body: the scan hands over the index's entries as it makes
 * them, and they are stored beside the body as both stream in, so that little of the index is
 * left to write and make durable once the body is whole. The version records where it is (or,
 * for a state that is not a readable Terraform state, why there is none): a version is never
 * current without its index.
 */
export function indexStage(store: ObjectStore, object: string): StagePart {
  const stream = new IndexStream()
  const stored = storeIndex(store, object, stream)
  stored.catch(() => undefined)
  return {
    scan: { index: true, onEntries: stream.push },
    beside: (at) => [indexKeyOf(at)],
    scanned: (scan) => {
      stream.end(scan)
    },
    failed: (error) => {
      stream.fail(error)
    },
    stored: async () => {
      const ref = await stored
      return {
        kept: (at) => (ref !== undefined && 'object' in ref ? [indexKeyOf(at)] : []),
        fields: (at) => (ref === undefined ? {} : { [INDEX_FIELD]: refAt(ref, at) }),
      }
    },
  }
}

/**
 * Stores the index of the state at `object` beside it. Returns what its version record says of
 * it, as stored beside `object`.
 */
async function storeIndex(
  store: ObjectStore,
  object: string,
  stream: IndexStream,
): Promise<IndexRef | undefined> {
  try {
    await store.put(indexKeyOf(object), stream.body(), {
      contentType: 'application/json',
      flushEvery: INDEX_FLUSH_EVERY,
    })
  } catch (error) {
    if (error instanceof NoIndex) return error.ref
    throw error
  }
  return { object: indexKeyOf(object), resources: stream.count }
}

/** The version's index field: the staged index, at the key beside `object` where it now lies. */
function refAt(ref: IndexRef, object: string): IndexRef {
  return 'none' in ref ? ref : { object: indexKeyOf(object), resources: ref.resources }
}
