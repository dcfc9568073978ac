import { describe, expect, it } from 'vitest'
import { Slot, SlotPool } from './slot-pool'

describe('SlotPool', () => {
  it('gives at most its limit of slots, and one back for each released', () => {
    const pool = new SlotPool(3, 3)
    const slots = ['a', 'b', 'c'].map((holder) => pool.take(holder))
    expect(slots.every((slot) => slot instanceof Slot)).toBe(true)
    expect(pool.take('d')).toBe('full')
    ;(slots[0] as Slot).release()
    expect(pool.take('d')).toBeInstanceOf(Slot)
    expect(pool.inUse).toBe(3)
  })

  it('keeps one holder to its share, leaving the other slots to others', () => {
    const pool = new SlotPool(4, 2)
    const first = pool.take('alice')
    const second = pool.take('alice')
    expect(pool.take('alice')).toBe('share')
    expect(pool.take('bob')).toBeInstanceOf(Slot)
    expect(pool.heldBy('alice')).toBe(2)
    ;(first as Slot).release()
    ;(second as Slot).release()
    expect(pool.heldBy('alice')).toBe(0)
    expect(pool.inUse).toBe(1)
  })

  it('counts a release once however often it is called', () => {
    const pool = new SlotPool(2, 2)
    const slot = pool.take('alice') as Slot
    slot.release()
    slot.release()
    expect(pool.inUse).toBe(0)
    expect(pool.heldBy('alice')).toBe(0)
  })

  it('reserves a slot before its holder is known and claims it for the holder later', () => {
    const pool = new SlotPool(3, 1)
    const first = pool.reserve() as Slot
    const second = pool.reserve() as Slot
    expect(first.claim('alice')).toBe(true)
    expect(second.claim('alice')).toBe(false)
    second.release()
    expect(pool.inUse).toBe(1)
    expect(first.claim('alice')).toBe(true)
    expect(pool.heldBy('alice')).toBe(1)
  })
})
