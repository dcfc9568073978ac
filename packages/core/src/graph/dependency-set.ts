import { createHash } from 'node:crypto'
import { DependenciesSchema, type Dependency } from '@cairn/contract'
import { parseUnitId } from '../units/unit-id'
import { validate } from '../validation'
import { edgeKey } from './graph-node'

/** A unit's dependencies with the tag that `If-Match` compares. */
export interface DependencySet {
  dependencies: Dependency[]
  /** Changes whenever the set does: a quoted hash, as an HTTP ETag. */
  etag: string
}

/** Checks a `{"dependencies": [...]}` body: unit IDs valid, no repeats kept, sorted. */
export function parseDependencies(body: unknown): Dependency[] {
  const { dependencies } = validate(DependenciesSchema, body)
  const unique = new Map<string, Dependency>()
  for (const dependency of dependencies) {
    const from = parseUnitId(dependency.from)
    const edge = dependency.output === undefined ? { from } : { from, output: dependency.output }
    unique.set(edgeKey(edge), edge)
  }
  return sorted([...unique.values()])
}

export function setOf(edges: readonly Dependency[]): DependencySet {
  const dependencies = sorted(
    edges.map((edge) =>
      edge.output === undefined ? { from: edge.from } : { from: edge.from, output: edge.output },
    ),
  )
  const hash = createHash('sha256').update(JSON.stringify(dependencies)).digest('base64url')
  return { dependencies, etag: `"${hash.slice(0, 27)}"` }
}

function sorted(dependencies: Dependency[]): Dependency[] {
  return dependencies.sort((a, b) => {
    const x = edgeKey(a)
    const y = edgeKey(b)
    return x < y ? -1 : x > y ? 1 : 0
  })
}
