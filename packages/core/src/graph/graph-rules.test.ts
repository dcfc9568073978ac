import { describe, expect, it } from 'vitest'
import { emptyGraph, type GraphRecord, type GraphUnit } from './graph-record'
import { Graph } from './graph-draft'
import { StatusReader } from './graph-rules'

const version = { timestamp: '2026-01-01T00:00:00.000Z', serial: 2 }

/** A unit with state whose consumed output `out` has digest `digest`. */
function unit(digest: string, dependencies: GraphUnit['dependencies'] = []): GraphUnit {
  return {
    created: '2026-01-01T00:00:00.000Z',
    removed: null,
    version,
    state: `state-${digest}`,
    outputs: { out: digest },
    dependencies,
  }
}

describe('StatusReader', () => {
  it('walks a chain of 20,000 units without recursion', () => {
    const graph: GraphRecord = emptyGraph()
    const length = 20_000
    graph.units['u0'] = unit('new')
    for (let index = 1; index < length; index += 1) {
      // u1 acknowledged an older value of u0; every later link is in step.
      const ack = index === 1 ? 'old' : 'same'
      graph.units[`u${String(index)}`] = unit('same', [
        { from: `u${String(index - 1)}`, output: 'out', ack, since: null },
      ])
    }
    const reader = new StatusReader(Graph.fromRecord(graph))
    const last = reader.report(`u${String(length - 1)}`)
    expect(last.status).toBe('yellow')
    expect(last.red_upstream).toEqual(['u1'])
    expect(reader.report('u1')).toMatchObject({
      status: 'red',
      edges: [{ from: 'u0', output: 'out', state: 'pending', since: version }],
    })
    expect(reader.report('u0').status).toBe('green')
  })

  it('names only the nearest red units upstream', () => {
    const graph: GraphRecord = emptyGraph()
    graph.units['a'] = unit('1')
    graph.units['b'] = unit('1', [{ from: 'a', output: 'out', ack: '0', since: null }])
    graph.units['c'] = unit('1', [{ from: 'b', output: 'out', ack: '0', since: null }])
    graph.units['d'] = unit('1', [{ from: 'c', output: 'out', ack: '1', since: null }])
    const reader = new StatusReader(Graph.fromRecord(graph))
    expect(reader.report('c')).toMatchObject({ status: 'red', red_upstream: ['b'] })
    expect(reader.report('d')).toMatchObject({ status: 'yellow', red_upstream: ['c'] })
  })

  it('answers green with no edges for a unit outside the graph', () => {
    expect(new StatusReader(Graph.empty()).report('lonely')).toEqual({
      id: 'lonely',
      status: 'green',
      edges: [],
      red_upstream: [],
    })
  })
})
