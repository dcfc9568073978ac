import { describe, expect, it } from 'vitest'
import { didYouMean, editDistance } from './did-you-mean'

const COMMANDS = ['login', 'logout', 'whoami', 'unit', 'status', 'tokens', 'unfreeze', 'freeze']

describe('didYouMean', () => {
  it.each([
    ['stauts', 'status'],
    ['unti', 'unit'],
    ['tokns', 'tokens'],
    ['logni', 'login'],
    ['Whoami', 'whoami'],
    ['tok', 'tokens'],
  ])('takes %s for %s', (typed, meant) => {
    expect(didYouMean(typed, COMMANDS)).toBe(meant)
  })

  it.each(['nope', 'x', 'deploy', ''])(
    'suggests nothing for %j, which is near no command',
    (typed) => {
      expect(didYouMean(typed, COMMANDS)).toBeUndefined()
    },
  )
})

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', 'abc', 0],
    ['abc', 'acb', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ])('counts %s to %s as %i edits', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance)
  })
})
