import { describe, expect, it } from 'vitest'
import { colourOn, tint, withoutColour } from './colour'

describe('colourOn', () => {
  it.each([
    ['a terminal', {}, true, true],
    ['a pipe or a file', {}, false, false],
    ['NO_COLOR on a terminal', { NO_COLOR: '1' }, true, false],
    ['an empty NO_COLOR, which no-color.org says to ignore', { NO_COLOR: '' }, true, true],
    ['TERM=dumb on a terminal', { TERM: 'dumb' }, true, false],
    ['FORCE_COLOR on a pipe', { FORCE_COLOR: '1' }, false, true],
    [
      'FORCE_COLOR with NO_COLOR, as Node.js lets it win',
      { FORCE_COLOR: '1', NO_COLOR: '1' },
      false,
      true,
    ],
    ['FORCE_COLOR=0 on a terminal', { FORCE_COLOR: '0' }, true, false],
    ['FORCE_COLOR=false on a terminal', { FORCE_COLOR: 'false' }, true, false],
  ])('decides right for %s', (_case, env: NodeJS.ProcessEnv, terminal, on) => {
    expect(colourOn(env, terminal)).toBe(on)
  })

  it('adds no escape code when colour is off', () => {
    expect(tint('red', 'red', false)).toBe('red')
    expect(tint('red', 'red', true)).toBe('\u001b[31mred\u001b[39m')
  })
})

describe('withoutColour', () => {
  it('drops colour and style codes and keeps the text', () => {
    expect(
      withoutColour('\u001b[4m\u001b[1mUSAGE\u001b[22m\u001b[24m \u001b[36mcairn\u001b[39m'),
    ).toBe('USAGE cairn')
  })
})
