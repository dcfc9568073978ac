import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { emptyGraph, GraphRecordSchema, type GraphRecord, type GraphUnit } from './graph-record'
import { Graph } from './graph-draft'
import { digestOf, StatusReader } from './graph-rules'

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

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'shows an edge on output %s of an upstream that has no such output as unknown',
    (name) => {
      const graph: GraphRecord = emptyGraph()
      graph.units['net'] = unit('1')
      graph.units['app'] = unit('1', [{ from: 'net', output: name, ack: null, since: null }])
      expect(digestOf(graph.units['net'], name)).toBeNull()
      expect(new StatusReader(Graph.fromRecord(graph)).report('app')).toMatchObject({
        status: 'green',
        edges: [{ from: 'net', output: name, state: 'unknown' }],
      })
    },
  )

  it.each(['__proto__', 'constructor', 'prototype'])(
    'compares an output really named %s from a stored graph like any other',
    (name) => {
      const stored = JSON.parse(
        JSON.stringify({
          format: 1,
          units: {
            net: { ...unit('1'), outputs: Object.fromEntries([[name, 'new']]) },
            app: unit('1', [{ from: 'net', output: name, ack: 'old', since: null }]),
            web: unit('1', [{ from: 'net', output: name, ack: 'new', since: null }]),
          },
        }),
      ) as unknown
      const reader = new StatusReader(Graph.fromRecord(v.parse(GraphRecordSchema, stored)))
      expect(reader.report('app')).toMatchObject({
        status: 'red',
        edges: [{ from: 'net', output: name, state: 'pending' }],
      })
      expect(reader.report('web')).toMatchObject({
        status: 'green',
        edges: [{ from: 'net', output: name, state: 'ok' }],
      })
    },
  )
})
