import { outputDigests } from '../state/canonical-json'
import { parseOutputs } from '../state/outputs'
import type { ScannedState } from '../state/state-scanner'
import { compare } from './instance-collector'
import type { IndexedOutput, ResourceIndex } from './resource-index'

/**
 * The index of a scanned state: its resources as the scan collected them, and its outputs with
 * the digests of their values and their sensitivity. `{ none }` when the state is not a readable
 * Terraform state; undefined when the scan did not index.
 */
export function buildIndex(scan: ScannedState): ResourceIndex | { none: string } | undefined {
  const resources = scan.resources
  if (resources === undefined) return undefined
  if ('none' in resources) return resources
  const header = scan.terraform
  if (header === undefined) return { none: 'the body is not a Terraform state' }
  return {
    format: 1,
    state_version: header.version,
    terraform_version: header.terraformVersion ?? null,
    modules: resources.modules,
    providers: resources.providers,
    resources: resources.resources,
    outputs: indexedOutputs(scan.outputs),
    truncated: resources.truncated,
  }
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
