import { describe, expect, it } from 'vitest'
import { ifMatchOf } from './if-match'

const CURRENT = '"Zm9vYmFy"'

describe('an If-Match header', () => {
  it.each([
    ['the current tag', CURRENT, true],
    ['any tag', '*', true],
    ['a list holding the current tag', `"other", ${CURRENT}`, true],
    ['the current tag marked weak', `W/${CURRENT}`, true],
    ['a list of a weak tag and the current one', `W/"x", ${CURRENT}`, true],
    ['another tag', '"other"', false],
    ['the tag without its quotes', 'Zm9vYmFy', false],
  ])('naming %s matches: %s', (_what, header, matches) => {
    expect(ifMatchOf(header)(CURRENT)).toBe(matches)
  })
})
