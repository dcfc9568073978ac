import { createMemoryStore, PreconditionFailedError } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import { instrumentStore } from './instrumented-store'
import { createServerMetrics } from './server-metrics'

/** The value of one series of a counter, 0 when it was never counted. */
async function countOf(
  metrics: ReturnType<typeof createServerMetrics>,
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await metrics.storeOperations.get()
  const found = values.find((value) =>
    Object.entries(labels).every(
      ([name, expected]) => (value.labels as Record<string, unknown>)[name] === expected,
    ),
  )
  return found?.value ?? 0
}

describe('instrumentStore', () => {
  it('counts each operation by outcome and passes its result through', async () => {
    const metrics = createServerMetrics()
    const store = instrumentStore(createMemoryStore(), metrics)
    const info = await store.put('a/b', new TextEncoder().encode('hello'))
    expect((await store.head('a/b'))?.size).toBe(5)
    expect(await store.get('a/missing')).toBeUndefined()
    expect((await store.list({ prefix: 'a/' })).objects.map((object) => object.key)).toEqual([
      'a/b',
    ])
    await store.delete('a/b', { ifMatch: info.etag })
    await store.ping()

    for (const operation of ['put', 'head', 'get', 'list', 'delete', 'ping']) {
      expect(await countOf(metrics, { operation, outcome: 'ok' })).toBe(1)
    }
  })

  it('counts a lost conditional write as precondition_failed, and rethrows it', async () => {
    const metrics = createServerMetrics()
    const store = instrumentStore(createMemoryStore(), metrics)
    await store.put('k', new Uint8Array([1]))
    await expect(
      store.put('k', new Uint8Array([2]), { condition: { ifNoneMatch: '*' } }),
    ).rejects.toBeInstanceOf(PreconditionFailedError)
    expect(await countOf(metrics, { operation: 'put', outcome: 'precondition_failed' })).toBe(1)
    expect(await countOf(metrics, { operation: 'put', outcome: 'ok' })).toBe(1)
  })

  it('counts any other failure as an error', async () => {
    const metrics = createServerMetrics()
    const failing = {
      ...createMemoryStore(),
      ping: () => Promise.reject(new Error('the disk is gone')),
    }
    const store = instrumentStore(failing, metrics)
    await expect(store.ping()).rejects.toThrow('the disk is gone')
    expect(await countOf(metrics, { operation: 'ping', outcome: 'error' })).toBe(1)
    const text = await metrics.registry.metrics()
    expect(text).toContain('cairn_store_operation_duration_seconds_count{operation="ping"} 1')
  })
})
