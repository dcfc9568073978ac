import { describe, expect, it } from 'vitest'
import { WeightedGate } from './weighted-gate'

/** Work that ends when told to, counting how much runs at once. */
function probe() {
  let running = 0
  let most = 0
  const enders: (() => void)[] = []
  const work = () =>
    new Promise<void>((resolve) => {
      running += 1
      most = Math.max(most, running)
      enders.push(() => {
        running -= 1
        resolve()
      })
    })
  return { work, enders, most: () => most, running: () => running }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('WeightedGate', () => {
  it('lets in as much as fits, the rest as room is made, in the order asked', async () => {
    const gate = new WeightedGate(10)
    const p = probe()
    const order: number[] = []
    const runs = [6, 4, 3, 2].map((weight, at) =>
      gate.run(weight, async () => {
        order.push(at)
        await p.work()
      }),
    )
    await settle()
    expect(order).toEqual([0, 1])
    p.enders.shift()?.()
    await settle()
    expect(order).toEqual([0, 1, 2, 3])
    for (const end of p.enders.splice(0)) end()
    await settle()
    for (const end of p.enders.splice(0)) end()
    await Promise.all(runs)
    expect(p.running()).toBe(0)
  })

  it('runs work heavier than its capacity alone rather than never', async () => {
    const gate = new WeightedGate(10)
    const p = probe()
    const heavy = gate.run(50, () => p.work())
    const light = gate.run(1, () => p.work())
    await settle()
    expect(p.running()).toBe(1)
    p.enders.shift()?.()
    await settle()
    expect(p.running()).toBe(1)
    p.enders.shift()?.()
    await Promise.all([heavy, light])
  })

  it('gives the weight back when the work fails', async () => {
    const gate = new WeightedGate(5)
    await expect(gate.run(5, () => Promise.reject(new Error('no')))).rejects.toThrow('no')
    expect(await gate.run(5, () => Promise.resolve('ran'))).toBe('ran')
  })
})
