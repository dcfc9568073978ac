/**
 * What an index entry holds of an instance, shared by the two places that write entries (the byte
 * loop, `wasm/json-scan.ts`, and the script's collector, `instance-collector.ts`) and the one that
 * reads them (`@cairn/state-index`'s `index-entries.ts`): DESIGN.md, "The entry format", says
 * what must change together.
 */

/** The top-level string attributes users search by, when an instance has them. */
export const IDENTITY_ATTRIBUTES = [
  'id',
  'arn',
  'name',
  'self_link',
  'bucket',
  'fqdn',
  'dns_name',
  'hostname',
  'email',
  'url',
] as const

/** The longest identity value kept; a longer one is not indexed (it is no ID anyone types). */
export const MAX_IDENTITY_CHARS = 512
/** The most instances one index holds; a state with more is indexed up to here, `truncated`. */
export const MAX_INDEXED_INSTANCES = 250_000

/**
 * One entry, as both writers write it: one JSON object, with these fields in this order, as
 * `JSON.stringify` would write it; `index_key` and `deposed` only when the instance has them.
 * `@cairn/state-index` reads it with its own schema (`IndexedInstanceSchema`), which must accept
 * exactly this.
 */
export interface IndexEntry {
  /** Terraform's address: `module.net["eu"].aws_subnet.private[0]`, `data.aws_ami.base`. */
  address: string
  /** The module address, `""` for the root module. */
  module: string
  mode: 'managed' | 'data'
  type: string
  name: string
  provider: string
  /** `<length of the attributes' JSON, base 36>-<their 64-bit hash, 16 hex digits>`. */
  digest: string
  /** The `count` index (a number) or `for_each` key (a string). */
  index_key?: number | string
  /** The deposed object's key. */
  deposed?: string
  /** The identity attributes that are strings and not sensitive, ordered by name. */
  identity: Record<string, string>
}
