import { outputDigests } from '../state/canonical-json'
import { parseOutputs } from '../state/outputs'
import type { ScannedState } from '../state/state-scanner'
import { compare } from './instance-collector'
import type { IndexedOutput, ResourceIndex } from './resource-index'

/** An index as stored: its JSON, and how many instances it lists. */
export interface IndexBytes {
  bytes: Buffer
  count: number
}

/**
 * The stored form of a scanned state's index: its resources as the scan collected them (already
 * JSON), and its outputs with the digests of their values and their sensitivity. `{ none }` when
 * the state is not a readable Terraform state; undefined when the scan did not index.
 */
export function buildIndexBytes(scan: ScannedState): IndexBytes | { none: string } | undefined {
  const resources = scan.resources
  if (resources === undefined) return undefined
  if ('none' in resources) return resources
  const header = scan.terraform
  if (header === undefined) return { none: 'the body is not a Terraform state' }
  // The fields of `ResourceIndex`, `resources` last: it is the one large part, spliced in whole.
  const head = {
    format: 1,
    state_version: header.version,
    terraform_version: header.terraformVersion ?? null,
    modules: resources.modules,
    providers: resources.providers,
    outputs: indexedOutputs(scan.outputs),
    truncated: resources.truncated,
  }
  const bytes = Buffer.concat([
    Buffer.from(`${JSON.stringify(head).slice(0, -1)},"resources":[`),
    ...resources.resources,
    Buffer.from(']}'),
  ])
  return { bytes, count: resources.count }
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
