import { IDENTITY_ATTRIBUTES, MAX_IDENTITY_CHARS, MAX_INDEXED_INSTANCES } from './entry-format'

// The numbers the byte loop (`wasm/json-scan.ts`) and this host share, written once here on the
// host's side: the module exports each under the name `hostConstants` gives it.

/** The most bytes one `scan` reads. */
export const SLICE = 64 * 1024
/**
 * The deepest a state may nest, counting each object and array: a deeper one is refused as it
 * streams in, and a deeper one stored before the limit is refused when read. A Terraform state's
 * own frame is six levels (the state, `resources`, a resource, `instances`, an instance,
 * `attributes`), and provider schemas nest a few dozen more at most (a WAFv2 rule's statements,
 * a Kubernetes manifest); Go's encoding/json, which Terraform reads states with, stops at 10,000.
 * 512 is far above any real state and well within what every reader here serves: a value is
 * written out, compared and digested by recursive code (`JSON.stringify` among it), which a
 * document some 5,000 levels deep overflows.
 */
export const MAX_STATE_DEPTH = 512
/** A value starts: its depth, position, and first byte. */
export const EVENT_START = 1
/** A value ends before the position. */
export const EVENT_END = 2
/** A key ends: its depth, the position after it, its length, and 1 when unreadable (long, escaped). */
export const EVENT_KEY = 3
/** With the index, a resource ends: the position, its instances, and 1 when its pieces were lost. */
export const EVENT_RESOURCE_END = 4

/**
 * The keys the index follows, numbered as the scan reports them: the top-level key of the
 * resources, a resource's fields and its `instances`, an instance's fields and its `attributes`,
 * and the identity attributes (sorted, as entries list them).
 */
export const INDEX_KEYS = {
  top: ['resources'],
  resource: ['module', 'mode', 'type', 'name', 'provider', 'instances'],
  instance: ['index_key', 'deposed', 'sensitive_attributes', 'attributes'],
  identity: [...IDENTITY_ATTRIBUTES].sort(),
} as const
/** How many of `INDEX_KEYS.resource` are fields (before `instances`). */
export const RESOURCE_FIELD_COUNT = 5

/**
 * The byte loop's errors, by the name it exports each code under, and how each is worded; the
 * loop and this table must agree (`wasm-constants.ts` checks it).
 */
export const SCAN_ERRORS = {
  E_CONTROL: { code: 1, reason: 'control character in a string' },
  E_ESCAPE: { code: 2, reason: 'invalid escape in a string' },
  E_HEX: { code: 3, reason: 'invalid \\u escape in a string' },
  E_LEADING_ZERO: { code: 4, reason: 'invalid number: leading zero' },
  E_NUMBER: { code: 5, reason: 'invalid number' },
  E_VALUE: { code: 7, reason: 'expected a value' },
  E_KEY: { code: 8, reason: 'expected a quoted object key' },
  E_COLON: { code: 9, reason: 'expected : after an object key' },
  E_AFTER_VALUE: { code: 10, reason: 'expected , or a closing bracket' },
  E_TRAILING: { code: 11, reason: 'unexpected data after the document' },
  E_LITERAL: { code: 12, reason: 'invalid literal' },
  E_INCOMPLETE_NUMBER: { code: 13, reason: 'incomplete number' },
} as const
/** The byte loop's error for a document nested deeper than `MAX_STATE_DEPTH`. */
export const TOO_DEEP = 6
/** The byte loop's error for a document that ended before its value did. */
export const UNFINISHED = 14

/** An instance's record, as the scan kept it (see wasm/json-scan.ts), in i32 words. */
export const RECORD_WORDS = 14
export const RECORD_IDENTITY_FIRST = 6
export const RECORD_IDENTITY_COUNT = 7
export const RECORD_HAS_ATTRIBUTES = 8
/** The attributes' length, in f64s from the record's start. */
export const RECORD_LENGTH = 5
/** The attributes' digest, in u64s from the record's start. */
export const RECORD_DIGEST = 6

/**
 * The depths of the `resources` tree: keys of the top-level object at 1, elements of `resources`
 * at 2, each resource's keys at 3, elements of its `instances` at 4, each instance's keys at 5,
 * and the keys of its `attributes` at 6.
 */
export const TOP_KEYS = 1
export const RESOURCE_ELEMENTS = 2
export const RESOURCE_KEYS = 3
export const INSTANCE_ELEMENTS = 4
export const INSTANCE_KEYS = 5
export const ATTRIBUTE_KEYS = 6

/** The largest resource field (a module address, a provider) or identity value read. */
export const MAX_FIELD_BYTES = 4096
/** The largest `sensitive_attributes` read; a larger one makes every identity value sensitive. */
export const MAX_SENSITIVE_BYTES = 64 * 1024

/**
 * Every number the byte loop (`wasm/json-scan.ts`) and this host both use, by the name the module
 * exports it under, with the host's value. They are written twice, once in each language, so they
 * are compared when the module is first instantiated: a module built from an older source (or a
 * host changed without it) stops the scan with one line naming what differs, rather than scanning
 * states wrongly.
 */
export function hostConstants(): Readonly<Record<string, number>> {
  const field = (key: (typeof INDEX_KEYS.resource)[number]) => INDEX_KEYS.resource.indexOf(key)
  const instance = (key: (typeof INDEX_KEYS.instance)[number]) => INDEX_KEYS.instance.indexOf(key)
  return {
    SLICE,
    MAX_DEPTH: MAX_STATE_DEPTH,
    MAX_INDEXED: MAX_INDEXED_INSTANCES,
    START: EVENT_START,
    END: EVENT_END,
    KEY_END: EVENT_KEY,
    RESOURCE_END: EVENT_RESOURCE_END,
    ...Object.fromEntries(Object.entries(SCAN_ERRORS).map(([name, { code }]) => [name, code])),
    E_DEPTH: TOO_DEEP,
    E_UNFINISHED: UNFINISHED,
    TOP_KEYS,
    RESOURCE_ELEMENTS,
    RESOURCE_KEYS,
    INSTANCE_ELEMENTS,
    INSTANCE_KEYS,
    ATTRIBUTE_KEYS,
    // The key tables, in the order the host writes them, and each key's number in its table.
    TABLE_TOP: 0,
    TABLE_RESOURCE: 1,
    TABLE_INSTANCE: 2,
    TABLE_IDENTITY: 3,
    F_MODULE: field('module'),
    F_MODE: field('mode'),
    F_TYPE: field('type'),
    F_NAME: field('name'),
    F_PROVIDER: field('provider'),
    F_INSTANCES: field('instances'),
    I_INDEX_KEY: instance('index_key'),
    I_DEPOSED: instance('deposed'),
    I_SENSITIVE: instance('sensitive_attributes'),
    I_ATTRIBUTES: instance('attributes'),
    MAX_FIELD_BYTES,
    MAX_SENSITIVE_BYTES,
    MAX_IDENTITY_CHARS,
    // An instance's record: its size, and where its fields are.
    RECORD_BYTES: RECORD_WORDS * 4,
    RECORD_IDENTITY_FIRST,
    RECORD_IDENTITY_COUNT,
    RECORD_HAS_ATTRIBUTES,
    RECORD_LENGTH_AT: RECORD_LENGTH * 8,
    RECORD_DIGEST_AT: RECORD_DIGEST * 8,
  }
}

/**
 * Compares the module's exported constants with the host's.
 *
 * @throws Error naming the first constant the two disagree on, and how to mend it
 */
export function checkMirrored(exports: Readonly<Record<string, unknown>>): true {
  for (const [name, host] of Object.entries(hostConstants())) {
    const exported = exports[name]
    const module =
      typeof exported === 'object' && exported !== null && 'value' in exported
        ? Number(exported.value)
        : undefined
    if (module !== host) {
      throw new Error(
        `the state scanner's WebAssembly module and its host disagree on ${name}: the module has ${String(module)}, the host ${host}. Build the module again from wasm/json-scan.ts (npm run wasm in packages/state-scan), or mend the side that changed.`,
      )
    }
  }
  return true
}
