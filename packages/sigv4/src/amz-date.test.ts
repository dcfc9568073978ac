import { describe, expect, it } from 'vitest'
import { parseAmzDate, parseHttpDate, toAmzDate } from './amz-date'

describe('parseAmzDate', () => {
  it('reads the basic ISO 8601 form', () => {
    expect(parseAmzDate('20130524T000000Z')).toBe(Date.UTC(2013, 4, 24))
    expect(toAmzDate(Date.UTC(2015, 7, 30, 12, 36))).toBe('20150830T123600Z')
  })

  it.each(['2013-05-24T00:00:00Z', '20130524T000000', '20130231T000000Z', '20130524T250000Z', ''])(
    'refuses %j',
    (value) => {
      expect(parseAmzDate(value)).toBeUndefined()
    },
  )

  it('reads an HTTP date', () => {
    expect(parseHttpDate('Fri, 24 May 2013 00:00:00 GMT')).toBe(Date.UTC(2013, 4, 24))
    expect(parseHttpDate('yesterday')).toBeUndefined()
  })
})
