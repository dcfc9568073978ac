import { describe, expect, it } from 'vitest'
import { flagsHelp, parseFlags } from './flags'
import type { FlagSpecs } from './flags'

const specs = {
  rounds: { kind: 'whole', default: 5, min: 1, max: 100, help: 'measured rounds' },
  'size-mib': { kind: 'number', default: 100, min: 0.1, max: 4096, help: 'size of the state' },
  units: { kind: 'wholes', default: [1000, 10000], min: 10, max: 100_000, help: 'graph sizes' },
  parts: {
    kind: 'set',
    default: ['upload', 'scan'],
    choices: ['upload', 'scan', 'diff'],
    help: 'parts',
  },
  nagle: { kind: 'boolean', help: 'leave Nagle on' },
} as const satisfies FlagSpecs

describe("a bench's flags", () => {
  it('gives the defaults when no flag is given', () => {
    const parsed = parseFlags(specs, [])
    expect(parsed).toMatchObject({
      ok: true,
      values: {
        rounds: 5,
        'size-mib': 100,
        units: [1000, 10000],
        parts: ['upload', 'scan'],
        nagle: false,
      },
      common: { help: false, noBuild: false, quick: false, dryRun: false, resultsDir: undefined },
    })
  })

  it('reads each kind: whole numbers, numbers, lists, sets and switches', () => {
    const parsed = parseFlags(specs, [
      '--rounds', '9', '--size-mib', '0.5', '--units', '10,200', '--parts', 'diff,upload,diff', '--nagle',
    ]) // prettier-ignore
    expect(parsed).toMatchObject({
      ok: true,
      values: {
        rounds: 9,
        'size-mib': 0.5,
        units: [10, 200],
        parts: ['diff', 'upload'],
        nagle: true,
      },
    })
    expect(parsed.ok && [...parsed.given].sort()).toEqual([
      'nagle',
      'parts',
      'rounds',
      'size-mib',
      'units',
    ])
  })

  it.each([
    [['--rounds', '0'], '--rounds must be a whole number from 1 to 100, not 0'],
    [['--rounds', '2.5'], '--rounds must be a whole number from 1 to 100, not 2.5'],
    [['--rounds', ''], '--rounds must be a whole number from 1 to 100, not '],
    [['--size-mib', 'big'], '--size-mib must be a number from 0.1 to 4096, not big'],
    [
      ['--units', '10,,20'],
      '--units takes whole numbers from 10 to 100000, separated by commas, not 10,,20',
    ],
    [['--units', '5'], '--units takes whole numbers from 10 to 100000, separated by commas, not 5'],
    [
      ['--parts', 'search'],
      '--parts takes one or more of upload, scan, diff, separated by commas, not search',
    ],
  ])('refuses %j with a message naming the flag', (argv, message) => {
    expect(parseFlags(specs, argv)).toEqual({ ok: false, message })
  })

  it('refuses an unknown flag and a stray argument', () => {
    const unknown = parseFlags(specs, ['--round', '3'])
    expect(unknown.ok).toBe(false)
    expect(!unknown.ok && unknown.message).toContain("'--round'")
    expect(parseFlags(specs, ['10']).ok).toBe(false)
  })

  it('takes the quick preset under --quick, and a flag given beside it wins', () => {
    const quick = { rounds: 2, units: [10] }
    expect(parseFlags(specs, ['--quick'], quick)).toMatchObject({
      values: { rounds: 2, units: [10], 'size-mib': 100 },
      common: { quick: true },
    })
    expect(parseFlags(specs, ['--quick', '--rounds', '7'], quick)).toMatchObject({
      values: { rounds: 7, units: [10] },
    })
    expect(parseFlags(specs, [], quick)).toMatchObject({ values: { rounds: 5 } })
  })

  it('reads the common flags every bench takes', () => {
    expect(
      parseFlags(specs, ['--no-build', '--dry-run', '-h', '--results-dir', '/tmp/r']),
    ).toMatchObject({
      common: { noBuild: true, dryRun: true, help: true, resultsDir: '/tmp/r' },
    })
    const results = parseFlags(specs, ['--results'])
    expect(results.ok && results.common.resultsDir).toMatch(/bench\/results$/)
  })

  it('derives --help from the same rows: each flag, its help, its default and quick value', () => {
    const help = flagsHelp(specs, { rounds: 2 })
    expect(help).toContain('--rounds N')
    expect(help).toContain('measured rounds (default 5; --quick 2)')
    expect(help).toContain('graph sizes (default 1000,10000)')
    expect(help).toMatch(/--nagle +leave Nagle on\n/)
  })
})
