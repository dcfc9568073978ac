import { mapLimit } from '../concurrency/map-limit'
import type { ObjectStore } from '../storage/object-store'
import { readRecord } from '../storage/stored-json'
import { versionsFolder } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import { VersionRecordSchema } from '../units/unit-record'
import type { VersionRef } from '@cairn/contract'
import { digestOf, type GraphNode } from './graph-node'

/** How many earlier versions of an upstream a search for `since` reads at most. */
const WALK_VERSIONS = 100
/** How many version records it reads at once. */
const WALK_READS = 8
/** How many version digests are kept: version records never change once written. */
const CACHE_ENTRIES = 20_000

/** What `since` needs of one version: its reference and the digests an edge may compare. */
interface VersionDigests {
  ref: VersionRef
  sha256: string | null
  outputs: Readonly<Record<string, string>> | null
}

/**
 * Works out `since` for a pending edge: the first version of the upstream after the last one
 * whose value matched what the edge acknowledged. It reads the upstream's earlier versions,
 * newest first, until it meets the acknowledged value (at most `WALK_VERSIONS`; beyond that it
 * names the oldest version read). Version records never change, so what it reads is kept.
 */
export class SinceFinder {
  readonly #store: ObjectStore
  readonly #versions = new Map<string, VersionDigests | null>()

  constructor(store: ObjectStore) {
    this.#store = store
  }

  async since(
    upstreamId: string,
    upstream: GraphNode,
    edge: { output?: string; ack: string | null },
  ): Promise<VersionRef | null> {
    if (upstream.version === null) return null
    let since: VersionRef = upstream.version
    const folder = versionsFolder(upstreamId as UnitId, upstream.epoch)
    let cursor: string | undefined
    let walked = 0
    do {
      const page = await this.#store.list({
        prefix: folder,
        limit: Math.min(20, WALK_VERSIONS - walked),
        ...(cursor === undefined ? {} : { cursor }),
      })
      const versions = await mapLimit(page.objects, WALK_READS, ({ key }) => this.#read(key))
      for (const version of versions) {
        if (version === null) continue
        // Versions made after the current one (a race with a write) are not earlier ones.
        if (version.ref.timestamp >= upstream.version.timestamp) continue
        if (digestOf(version, edge.output) === edge.ack) return since
        since = version.ref
      }
      walked += page.objects.length
      cursor = page.cursor
    } while (cursor !== undefined && walked < WALK_VERSIONS)
    return since
  }

  async #read(key: string): Promise<VersionDigests | null> {
    const cached = this.#versions.get(key)
    if (cached !== undefined) return cached
    const stored = await readRecord(this.#store, key, VersionRecordSchema, `version record ${key}`)
    const record = stored?.value
    const digests =
      record === undefined
        ? null
        : {
            ref: { timestamp: record.timestamp, serial: record.serial },
            sha256: record.serial === null ? null : record.sha256,
            outputs: record.output_digests ?? null,
          }
    if (record !== undefined) {
      this.#versions.set(key, digests)
      if (this.#versions.size > CACHE_ENTRIES) {
        const oldest = this.#versions.keys().next().value
        if (oldest !== undefined) this.#versions.delete(oldest)
      }
    }
    return digests
  }
}
