import { describe, expect, it } from 'vitest'
import {
  hasControlCharacters,
  isPrintableAscii,
  jsonWithVisibleControls,
  printableText,
  visibleText,
} from './printable'

/** Every kind of control: C0 (NUL, BEL, ESC, BS), DEL, C1 (NEL, CSI), bidirectional ones. */
const HOSTILE = 'a\u0000b\u0007c\u007fd\u0085e\u009bf\u202eg\u2066h\u2069i\tj\u0008k\u001b[2Jl'
/** What people write, in any script, with no control in it. */
const ORDINARY = 'Ünïcödé λ 日本語 ✓ — déploiement 🌍 "quoted" \\ back'

describe('printableText', () => {
  it('drops every control character and makes line breaks one space', () => {
    expect(printableText(HOSTILE)).toBe('abcdefghi jk[2Jl')
    expect(printableText('CI job 42 died\r\n\u001b]8;;https://evil.example\u0007here')).toBe(
      'CI job 42 died ]8;;https://evil.examplehere',
    )
  })

  it('leaves ordinary text as it is', () => {
    expect(printableText(ORDINARY)).toBe(ORDINARY)
  })
})

describe('hasControlCharacters', () => {
  it.each(
    [0x00, 0x09, 0x0a, 0x0d, 0x1b, 0x7f, 0x80, 0x9b, 0x9f, 0x202a, 0x202e, 0x2066, 0x2069].map(
      (code) => [code.toString(16).padStart(4, '0'), String.fromCharCode(code)],
    ),
  )('finds U+%s', (_, char) => {
    expect(hasControlCharacters(`x${char}y`)).toBe(true)
  })

  it('finds none in ordinary text', () => {
    expect(hasControlCharacters(ORDINARY)).toBe(false)
  })
})

describe('isPrintableAscii', () => {
  it.each([
    ['v1.11.4', true, true],
    ['two words', true, false],
    ['', true, true],
    ['tab\there', false, false],
    ['déjà', false, false],
    ['del\u007f', false, false],
  ])('%j: printable %s, visible %s', (text, printable, visible) => {
    expect(isPrintableAscii(text)).toBe(printable)
    expect(isPrintableAscii(text, { spaces: false })).toBe(visible)
  })
})

describe('visibleText', () => {
  it('writes each control character out as an escape, so none acts and none is hidden', () => {
    expect(visibleText(HOSTILE)).toBe(
      'a\\x00b\\x07c\\x7fd\\x85e\\x9bf\\u202eg\\u2066h\\u2069i\\tj\\x08k\\x1b[2Jl',
    )
    expect(visibleText('\u001b]8;;https://evil.example\u0007x\r\n')).toBe(
      '\\x1b]8;;https://evil.example\\x07x\\r\\n',
    )
    expect(hasControlCharacters(visibleText(HOSTILE))).toBe(false)
  })

  it('leaves ordinary text as it is, and what it wrote too', () => {
    expect(visibleText(ORDINARY)).toBe(ORDINARY)
    expect(visibleText(visibleText(HOSTILE))).toBe(visibleText(HOSTILE))
  })
})

describe('jsonWithVisibleControls', () => {
  it('escapes what JSON.stringify leaves raw, and means the same value', () => {
    const value = { [HOSTILE]: [HOSTILE, ORDINARY] }
    const json = jsonWithVisibleControls(JSON.stringify(value))
    expect(hasControlCharacters(json)).toBe(false)
    expect(json).toContain('\\u009b')
    expect(JSON.parse(json)).toEqual(value)
  })
})
