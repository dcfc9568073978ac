import { describe, expect, it } from 'vitest'
import { GroupCommit } from './group-commit'

/** A write that holds until released, recording each batch it was given. */
function heldWrites() {
  const batches: number[][] = []
  const releases: (() => void)[] = []
  const write = (items: number[]) => {
    batches.push([...items])
    return new Promise<void>((resolve) => releases.push(resolve))
  }
  return { batches, releases, write }
}

describe('GroupCommit', () => {
  it('writes an item alone at once, and those that come during a write in the next one', async () => {
    const { batches, releases, write } = heldWrites()
    const group = new GroupCommit(write)
    const first = group.add(1)
    await Promise.resolve()
    expect(batches).toEqual([[1]])
    const rest = [group.add(2), group.add(3), group.add(4)]
    await Promise.resolve()
    expect(batches).toEqual([[1]])
    releases[0]?.()
    await first
    await new Promise((resolve) => setImmediate(resolve))
    expect(batches).toEqual([[1], [2, 3, 4]])
    releases[1]?.()
    await Promise.all(rest)
  })

  it('starts another batch past maxItems', async () => {
    const { batches, releases, write } = heldWrites()
    const group = new GroupCommit(write, { maxItems: 2 })
    const all = [1, 2, 3, 4, 5].map((item) => group.add(item))
    for (let round = 0; round < 3; round += 1) {
      await new Promise((resolve) => setImmediate(resolve))
      releases[round]?.()
    }
    await Promise.all(all)
    expect(batches).toEqual([[1, 2], [3, 4], [5]])
  })

  it('fails the callers of the batch whose write failed, and writes the next batch', async () => {
    let calls = 0
    const group = new GroupCommit<number>(() => {
      calls += 1
      return calls === 1 ? Promise.reject(new Error('disk full')) : Promise.resolve()
    })
    const failed = group.add(1)
    const next = group.add(2)
    await expect(failed).rejects.toThrow('disk full')
    await expect(next).rejects.toThrow('disk full')
    await expect(group.add(3)).resolves.toBeUndefined()
  })
})
