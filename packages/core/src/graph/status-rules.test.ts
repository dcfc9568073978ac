import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { OutputDigestsSchema } from '../state/outputs'
import type { StoredEdge } from '../units/unit-record'
import { digestOf, type GraphNode } from './graph-node'
import { StatusReader } from './status-rules'

const version = { timestamp: '2026-01-01T00:00:00.000Z', serial: 2 }

/** A unit with state whose output `out` has digest `digest`. */
function unit(digest: string, dependencies: StoredEdge[] = []): GraphNode {
  return { epoch: 'e1', version, sha256: null, outputs: { out: digest }, dependencies }
}

/** The nodes of a graph, as a status reader reads them. */
type Nodes = Record<string, GraphNode>
function graphOf(nodes: Nodes): { get: (id: string) => GraphNode | undefined } {
  const map = new Map(Object.entries(nodes))
  return { get: (id) => map.get(id) }
}

describe('StatusReader', () => {
  it('walks a chain of 20,000 units without recursion', () => {
    const graph: Nodes = {}
    const length = 20_000
    graph['u0'] = unit('new')
    for (let index = 1; index < length; index += 1) {
      // u1 acknowledged an older value of u0; every later link is in step.
      const ack = index === 1 ? 'old' : 'same'
      graph[`u${String(index)}`] = unit('same', [
        { from: `u${String(index - 1)}`, output: 'out', ack },
      ])
    }
    const reader = new StatusReader(graphOf(graph))
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
    const graph: Nodes = {}
    graph['a'] = unit('1')
    graph['b'] = unit('1', [{ from: 'a', output: 'out', ack: '0' }])
    graph['c'] = unit('1', [{ from: 'b', output: 'out', ack: '0' }])
    graph['d'] = unit('1', [{ from: 'c', output: 'out', ack: '1' }])
    const reader = new StatusReader(graphOf(graph))
    expect(reader.report('c')).toMatchObject({ status: 'red', red_upstream: ['b'] })
    expect(reader.report('d')).toMatchObject({ status: 'yellow', red_upstream: ['c'] })
  })

  it('answers green with no edges for a unit outside the graph', () => {
    expect(new StatusReader(graphOf({})).report('lonely')).toEqual({
      id: 'lonely',
      status: 'green',
      edges: [],
      red_upstream: [],
    })
  })

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'shows an edge on output %s of an upstream that has no such output as unknown',
    (name) => {
      const graph: Nodes = {}
      graph['net'] = unit('1')
      graph['app'] = unit('1', [{ from: 'net', output: name, ack: null }])
      expect(digestOf(graph['net'], name)).toBeNull()
      expect(new StatusReader(graphOf(graph)).report('app')).toMatchObject({
        status: 'green',
        edges: [{ from: 'net', output: name, state: 'unknown' }],
      })
    },
  )

  it.each(['__proto__', 'constructor', 'prototype'])(
    'compares an output really named %s from stored digests like any other',
    (name) => {
      const stored = JSON.parse(JSON.stringify(Object.fromEntries([[name, 'new']]))) as unknown
      const outputs = v.parse(OutputDigestsSchema, stored)
      const reader = new StatusReader(
        graphOf({
          net: { ...unit('1'), outputs },
          app: unit('1', [{ from: 'net', output: name, ack: 'old' }]),
          web: unit('1', [{ from: 'net', output: name, ack: 'new' }]),
        }),
      )
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
