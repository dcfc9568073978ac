import { describe, expect, it } from 'vitest'
import { UsageError } from '../../cli-error'
import { parseDependency, repeated } from './dependency-arg'

describe('parseDependency', () => {
  it('reads from and from:output', () => {
    expect(parseDependency('team/net')).toEqual({ from: 'team/net' })
    expect(parseDependency('team/net:vpc_id')).toEqual({ from: 'team/net', output: 'vpc_id' })
  })

  it('takes the part after the last colon as the output, and a trailing colon as the whole unit', () => {
    expect(parseDependency('db:blue:url')).toEqual({ from: 'db:blue', output: 'url' })
    expect(parseDependency('db:blue:')).toEqual({ from: 'db:blue' })
    expect(parseDependency('team:x/app')).toEqual({ from: 'team:x/app' })
  })

  it('refuses a colon with no unit before it', () => {
    expect(() => parseDependency(':vpc')).toThrow(UsageError)
  })
})

describe('repeated', () => {
  it('collects every value of a flag, in both spellings, up to --', () => {
    expect(
      repeated(['x', '--add', 'a', '--add=b', '--rm', 'c', '--', '--add', 'd'], 'add'),
    ).toEqual(['a', 'b'])
  })
})
