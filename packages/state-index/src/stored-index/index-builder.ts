import { outputDigests, parseOutputs } from '@cairn/core'
import { compare, type ScannedState } from '@cairn/state-scan'
import { DIGESTS, type IndexedOutput, type ResourceIndex } from './resource-index'

/** An index as stored: its JSON, and how many instances it lists. */
export interface IndexBytes {
  bytes: Buffer
  count: number
}

/**
 * How a stored index starts: the fields of `ResourceIndex`, `resources` first. It is the one large
 * part, written as the scan makes it (`INDEX_OPENING`, the entries, then `indexClosing`); the rest
 * is known once the body has ended. (Older indexes have `resources` last; readers parse either.)
 */
export const INDEX_OPENING: Uint8Array = Buffer.from('{"resources":[')

/**
 * What a stored index holds after the entries the scan handed over as it went: the entries it
 * kept to the end, then the other fields, in parts. `{ none }` when the state is not a readable
 * Terraform state; undefined when the scan did not index.
 */
export function indexClosing(
  scan: ScannedState,
): { parts: Uint8Array[]; count: number } | { none: string } | undefined {
  const resources = scan.resources
  if (resources === undefined) return undefined
  if ('none' in resources) return resources
  const header = scan.terraform
  if (header === undefined) return { none: 'the body is not a Terraform state' }
  const rest = {
    format: 1,
    digests: DIGESTS,
    state_version: header.version,
    terraform_version: header.terraformVersion ?? null,
    modules: resources.modules,
    providers: resources.providers,
    outputs: indexedOutputs(scan.outputs),
    truncated: resources.truncated,
  }
  const parts = [...resources.resources, Buffer.from(`],${JSON.stringify(rest).slice(1)}`)]
  return { parts, count: resources.count }
}

/**
 * The stored form of a scanned state's index, whole: its resources as the scan collected them
 * (already JSON), and its outputs with the digests of their values and their sensitivity.
 * `{ none }` when the state is not a readable Terraform state; undefined when the scan did not
 * index.
 */
export function buildIndexBytes(scan: ScannedState): IndexBytes | { none: string } | undefined {
  const closing = indexClosing(scan)
  if (closing === undefined || 'none' in closing) return closing
  return { bytes: Buffer.concat([INDEX_OPENING, ...closing.parts]), count: closing.count }
}

/** The index of a scanned state, as objects (see `buildIndexBytes`). */
export function buildIndex(scan: ScannedState): ResourceIndex | { none: string } | undefined {
  const built = buildIndexBytes(scan)
  if (built === undefined || 'none' in built) return built
  return JSON.parse(built.bytes.toString('utf8')) as ResourceIndex
}

/** Each output's digest and sensitivity; none when the outputs are absent or unreadable. */
function indexedOutputs(raw: Uint8Array | undefined): IndexedOutput[] {
  if (raw === undefined) return []
  const digests = outputDigests(raw)
  if (digests === null) return []
  let sensitive: Record<string, { sensitive: boolean }>
  try {
    sensitive = parseOutputs(raw)
  } catch {
    return []
  }
  return Object.keys(digests)
    .sort(compare)
    .map((name) => ({
      name,
      digest: digests[name] as string,
      // An output whose sensitivity cannot be read counts as sensitive.
      sensitive: Object.hasOwn(sensitive, name) ? (sensitive[name]?.sensitive ?? true) : true,
    }))
}
