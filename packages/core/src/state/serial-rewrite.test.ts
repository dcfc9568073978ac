import { describe, expect, it } from 'vitest'
import { bytesOf, terraformState, textOf } from '../testing/fixtures'
import { rewriteSerial } from './serial-rewrite'
import { StateScanner } from '@cairn/state-scan'

describe('serial rewriting', () => {
  it('replaces only the top-level serial, across any chunking', async () => {
    const text = terraformState({ serial: 7, outputs: { serial: '7' } })
    const scanner = new StateScanner()
    scanner.write(new TextEncoder().encode(text))
    const span = scanner.end().serialSpan ?? { start: 0, end: 0 }
    for (const chunk of [1, 2, 3, 64, 1 << 20]) {
      const rewritten = await textOf(
        rewriteSerial(bytesOf(text, chunk), [span.start, span.end], 1234),
      )
      expect(rewritten).toBe(text.replace('"serial": 7', '"serial": 1234'))
    }
  })
})
