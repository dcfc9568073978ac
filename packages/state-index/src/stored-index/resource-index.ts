import { besideState } from '@cairn/core'
import * as v from 'valibot'

export { IDENTITY_ATTRIBUTES, MAX_IDENTITY_CHARS, MAX_INDEXED_INSTANCES } from '@cairn/state-scan'

/**
 * The resource index of one state version: what a Terraform state holds, learned while its body
 * streamed in, small enough to read whole. Stored beside the version's state object and named by
 * its version record, so the two are committed together and never disagree.
 */

/** One resource instance of a state (an object of a resource, or one of its deposed objects). */
export const IndexedInstanceSchema = v.object({
  /** Terraform's address: `module.net["eu"].aws_subnet.private[0]`, `data.aws_ami.base`. */
  address: v.string(),
  /** The module address, `""` for the root module. */
  module: v.string(),
  mode: v.picklist(['managed', 'data']),
  type: v.string(),
  name: v.string(),
  /** The `count` index (a number) or `for_each` key (a string); absent for a single instance. */
  index_key: v.optional(v.union([v.number(), v.string()])),
  /** The deposed object's key, for an object kept while its replacement is created. */
  deposed: v.optional(v.string()),
  /** The provider configuration: `provider["registry.terraform.io/hashicorp/aws"].eu`. */
  provider: v.string(),
  /**
   * The digest of the instance's `attributes` as written: their length in base 36 and a 64-bit
   * hash of their bytes in hex (`<length>-<hash>`, see `AttributesDigest`). Different digests
   * mean changed attributes; equal ones, unchanged (a change is missed with odds of about one in
   * 2^64). Indexes without `digests` hold CRC-32s instead (`<length>-<crc>`, both in base 36),
   * which are not compared with these. Never shown by the API.
   */
  digest: v.string(),
  /** The identity attributes (`IDENTITY_ATTRIBUTES`) that are strings and not sensitive. */
  identity: v.record(v.string(), v.string()),
})
export type IndexedInstance = v.InferOutput<typeof IndexedInstanceSchema>

/** One top-level output: its name, the digest of its value, whether it is sensitive. */
export const IndexedOutputSchema = v.object({
  name: v.string(),
  digest: v.string(),
  sensitive: v.boolean(),
})
export type IndexedOutput = v.InferOutput<typeof IndexedOutputSchema>

/** What the index's instance digests are: absent in indexes written before `hash64`, CRC-32s. */
export const DIGESTS = 'hash64'

/** The stored index of one version (`format` 1). */
export const ResourceIndexSchema = v.object({
  format: v.literal(1),
  /** `hash64` (`DIGESTS`); absent when the digests are CRC-32s, which an older server wrote. */
  digests: v.optional(v.literal(DIGESTS)),
  /** The state format (`version` in the state: 4 today). */
  state_version: v.number(),
  terraform_version: v.nullable(v.string()),
  /** Every module address with resources in the state, sorted; the root module is not listed. */
  modules: v.array(v.string()),
  /** Every provider source address the state's resources use, sorted. */
  providers: v.array(v.string()),
  /** Every instance, in the state's order (`readIndex` sorts them by address). */
  resources: v.array(IndexedInstanceSchema),
  /** Every top-level output, sorted by name. */
  outputs: v.array(IndexedOutputSchema),
  /** Set when the state had more than `MAX_INDEXED_INSTANCES` instances and only those are here. */
  truncated: v.boolean(),
})
export type ResourceIndex = v.InferOutput<typeof ResourceIndexSchema>

/**
 * What a version record says of its index: where it is and how many instances it lists; or, as
 * `{ none: reason }`, that the state is not a readable Terraform state and has none. A version
 * record without the field was written before indexes existed: its index is made from its body
 * when asked for (and by a reindex).
 */
export const IndexRefSchema = v.union([
  v.object({ object: v.string(), resources: v.number() }),
  v.object({ none: v.string() }),
])
export type IndexRef = v.InferOutput<typeof IndexRefSchema>

/** The field of a version record that names its index: the state index's own. */
export const INDEX_FIELD = 'index'

/**
 * What a version record says of its index, read with the index's own schema; undefined for a
 * version written before indexes existed (or a field this server does not read).
 */
export function indexRefOf(version: Readonly<Record<string, unknown>>): IndexRef | undefined {
  const field = version[INDEX_FIELD]
  return v.is(IndexRefSchema, field) ? field : undefined
}

/** Where the index of the state object `stateObject` is kept: beside it, by its name. */
export function indexKeyOf(stateObject: string): string {
  return besideState(stateObject, 'indexes', '.json')
}
