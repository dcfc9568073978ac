import type { IndexEntry } from './entry-format'
import type { ScannedState } from './state-scanner'

/**
 * The index entries a scan made, parsed (for tests): the collected blocks are the entries of one
 * JSON array, commas between them, as `@cairn/state-index` stores them. Undefined when the scan
 * kept no index; `{ none }` when the state is not one that has an index.
 */
export function entriesOf(
  scan: ScannedState,
): { resources: IndexEntry[]; truncated: boolean } | { none: string } | undefined {
  const collected = scan.resources
  if (collected === undefined || 'none' in collected) return collected
  const text = collected.resources.map((block) => new TextDecoder().decode(block)).join('')
  return { resources: JSON.parse(`[${text}]`) as IndexEntry[], truncated: collected.truncated }
}
