import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BenchError } from './bench-error'
import { defineBench } from './bench-definition'
import type { Bench } from './bench-definition'
import { runCommand } from './run-command'
import type { Output } from './run-command'

/** A bench that measures nothing: it reports its flags back, or fails as asked. */
function fakeBench(name: string, fail?: Error): Bench {
  return defineBench({
    name,
    script: `bench:${name}`,
    summary: `The ${name} bench. It measures nothing.`,
    flags: {
      rounds: { kind: 'whole', default: 31, min: 1, max: 1000, help: 'measured rounds' },
      'small-mib': { kind: 'whole', default: 10, min: 0, max: 100, help: 'smaller size' },
      'size-mib': { kind: 'whole', default: 100, min: 1, max: 100, help: 'larger size' },
    },
    quick: { rounds: 3 },
    inAll: true,
    check: (values) =>
      values['small-mib'] >= values['size-mib']
        ? '--small-mib must be below --size-mib'
        : undefined,
    run: (values) => {
      if (fail !== undefined) return Promise.reject(fail)
      return Promise.resolve({
        title: `${name} benchmark`,
        facts: [`${values.rounds} rounds`],
        tables: [{ columns: ['figure', 'Cairn', 'baseline'], rows: [['upload', '130', '165']] }],
        notes: ['MiB/s'],
        figures: [
          {
            figure: `upload at ${values.rounds} rounds`,
            cairn: '130',
            baseline: '165',
            ratio: '0.79',
          },
        ],
      })
    },
  })
}

function capture(): Output & { out: string; err: string } {
  const buffers = {
    out: '',
    err: '',
    stdout: (text: string) => {
      buffers.out += text
    },
    stderr: (text: string) => {
      buffers.err += text
    },
  }
  return buffers
}

describe('the bench command', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-bench-results-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("prints a bench's help, derived from its flags, and exits 0", async () => {
    const io = capture()
    expect(await runCommand([fakeBench('fake')], ['fake', '--help'], io)).toBe(0)
    expect(io.out).toContain('usage: npm run bench:fake [-- options]')
    expect(io.out).toContain('measured rounds (default 31; --quick 3)')
    expect(io.out).toContain('--dry-run')
  })

  it.each([
    [['fake', '--rounds', 'many'], '--rounds must be a whole number from 1 to 1000, not many'],
    [['fake', '--no-such-flag'], "Unknown option '--no-such-flag'"],
    [['fake', '--small-mib', '100'], '--small-mib must be below --size-mib'],
    [['nothing'], 'no bench named nothing'],
  ])('exits 2 on bad flags %j, saying why', async (argv, message) => {
    const io = capture()
    expect(await runCommand([fakeBench('fake')], argv, io)).toBe(2)
    expect(io.err).toContain(message)
    expect(io.out).toBe('')
  })

  it('runs a bench, prints its report and its figures, and writes the results file', async () => {
    const io = capture()
    const status = await runCommand(
      [fakeBench('fake')],
      ['fake', '--quick', '--results-dir', dir],
      io,
    )
    expect(status, io.err).toBe(0)
    expect(io.out).toContain('fake benchmark\nnode v')
    expect(io.out).toContain('3 rounds')
    expect(io.out).toMatch(
      /summary\n\s+bench\s+figure\s+Cairn\s+baseline\s+ratio\n\s+fake\s+upload at 3 rounds\s+130\s+165\s+0\.79/,
    )
    const [file, ...more] = await readdir(dir)
    expect(more).toEqual([])
    expect(file).toMatch(
      /^\d{4}-\d{2}-\d{2}-[0-9a-f]{4,}-fake\.md$|^\d{4}-\d{2}-\d{2}-unknown-fake\.md$/,
    )
    const text = await readFile(join(dir, file ?? ''), 'utf8')
    expect(text).toContain(
      `- command: \`node bench/dist/main.js fake --quick --results-dir ${dir}\``,
    )
    expect(text).toMatch(/- machine: \d+ CPUs \(.+\), \d+ GiB, linux/)
    expect(text).toContain(`- node: ${process.version}`)
    expect(text).toContain('upload at 3 rounds')
  })

  it('never writes a results file over another of the same day and commit', async () => {
    const bench = [fakeBench('fake')]
    expect(await runCommand(bench, ['fake', '--results-dir', dir], capture())).toBe(0)
    expect(await runCommand(bench, ['fake', '--results-dir', dir], capture())).toBe(0)
    const files = (await readdir(dir)).map((file) => file.replace(/^.*-(fake)/, '$1')).sort()
    expect(files).toEqual(['fake-2.md', 'fake.md'])
  })

  it('prints what it would run with --dry-run, and runs nothing', async () => {
    const io = capture()
    const failing = fakeBench('fake', new Error('should not run'))
    expect(await runCommand([failing], ['fake', '--quick', '--rounds', '4', '--dry-run'], io)).toBe(
      0,
    )
    expect(io.out).toBe(
      'bench:fake: would run fake with --rounds 4 --small-mib 10 --size-mib 100\n',
    )
  })

  it('exits 1 with one line when the bench fails, and 1 with the stack when it crashes', async () => {
    const failed = capture()
    expect(
      await runCommand([fakeBench('fake', new BenchError('the server died'))], ['fake'], failed),
    ).toBe(1)
    expect(failed.err).toBe('bench: the server died\n')
    const crashed = capture()
    expect(await runCommand([fakeBench('fake', new TypeError('oops'))], ['fake'], crashed)).toBe(1)
    expect(crashed.err).toMatch(/^bench: TypeError: oops\n\s+at /)
  })

  it('runs every bench quick under all, one failing, and gathers the figures in one table', async () => {
    const io = capture()
    const registry = [
      fakeBench('first'),
      fakeBench('broken', new BenchError('no answer')),
      fakeBench('last'),
    ]
    expect(await runCommand(registry, ['all', '--results-dir', dir], io)).toBe(1)
    const table = io.out.slice(io.out.indexOf('all benches, --quick'))
    expect(table).toMatch(/first\s+upload at 3 rounds\s+130\s+165\s+0\.79/)
    expect(table).toMatch(/broken\s+failed: no answer/)
    expect(table).toMatch(/last\s+upload at 3 rounds/)
    const [file] = await readdir(dir)
    expect(file).toMatch(/-all\.md$/)
    expect(await readFile(join(dir, file ?? ''), 'utf8')).toMatch(
      /\| first \| upload at 3 rounds \| 130 \| 165 \| 0\.79 \|/,
    )
  })

  it('runs every bench under all --full, those left out of all too, each at its defaults', async () => {
    const io = capture()
    const apart = { ...fakeBench('apart'), inAll: false }
    expect(await runCommand([fakeBench('first'), apart], ['all', '--full'], io)).toBe(0)
    const table = io.out.slice(io.out.indexOf('all benches, at full size'))
    expect(table).toMatch(/first\s+upload at 31 rounds/)
    expect(table).toMatch(/apart\s+upload at 31 rounds/)
    expect(io.err).toContain('bench: bench:apart at full size')
  })
})
