import { describe, expect, it } from 'vitest'
import { createLogger } from './logger'

describe('the logger', () => {
  it('writes no control character of any field raw, and keeps every value', () => {
    const lines: string[] = []
    const log = createLogger('info', (line) => lines.push(line)).child({
      path: '/v1/units/\u001b[2J',
    })
    const hostile = 'a\u0000b\u001b]8;;https://evil.example\u0007c\r\nd\u007fe\u009bf\u202eg\u2066h'
    log.info(`refused ${hostile}`, { reason: hostile, error: new Error(hostile) })
    const [line] = lines
    if (line === undefined) throw new Error('nothing was logged')
    expect(line.endsWith('\n')).toBe(true)
    // eslint-disable-next-line no-control-regex -- looking for them is the point
    expect(line.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    const entry = JSON.parse(line) as Record<string, unknown>
    expect(entry).toMatchObject({
      msg: `refused ${hostile}`,
      reason: hostile,
      path: '/v1/units/\u001b[2J',
      error: { message: hostile },
    })
  })
})
