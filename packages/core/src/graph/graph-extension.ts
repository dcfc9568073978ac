import type { WriteExtension } from '../write-path/extensions'
import type { DependencyGraph } from './dependency-graph'
import { acksFor } from './graph-rules'

/**
 * The dependency graph's part in the write path. Before a commit it marks the unit as pending its
 * graph step (so a crash between the commit and the step is caught up on the next status
 * request) and, for a write (not a restore, which brings back a state made from older inputs),
 * records on the new version what its dependencies show now. After the commit it takes the step;
 * when the change is refused it removes the mark.
 */
export function graphExtension(graph: DependencyGraph): WriteExtension {
  return {
    name: 'dependency graph',
    async beforeCommit(change) {
      const current = await graph.read()
      const acks = change.kind === 'write' ? acksFor(current, change.unit) : undefined
      const mark = await graph.mark(current, change.unit)
      return {
        ...(acks === undefined ? {} : { versionFields: { acks } }),
        afterCommit: () => graph.settle(change.unit, mark),
        onAbort: () => graph.unmark(mark),
      }
    },
  }
}
