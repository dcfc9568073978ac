import { spawn } from 'node:child_process'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { root } from './harness/paths'

/**
 * The bench README's commands, run as a reader would type them from the repository root: every
 * command of a block after `<!-- bench-test: run -->` as it stands (the quick runs, end to end
 * against the built server), and every other command shown with `--dry-run`, which parses and
 * checks its flags and names the bench it would run.
 */
interface Command {
  readonly line: string
  readonly run: boolean
}

function commandsOf(readme: string): Command[] {
  const commands: Command[] = []
  const block = /(<!-- bench-test: run -->\s*\n)?```sh\n([\s\S]*?)```/g
  for (const [, marker, body] of readme.matchAll(block)) {
    for (const text of (body ?? '').split('\n')) {
      const line = text.replace(/\s+#.*$/, '').trim()
      if (line !== '') commands.push({ line, run: marker !== undefined })
    }
  }
  return commands
}

function withDryRun(line: string): string {
  return line.includes(' -- ') ? `${line} --dry-run` : `${line} -- --dry-run`
}

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

function bash(line: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
    const deadline = setTimeout(() => child.kill('SIGTERM'), 90_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(deadline)
      resolve({ code, stdout, stderr })
    })
  })
}

const readme = await readFile(join(root, 'bench', 'README.md'), 'utf8')
const commands = commandsOf(readme)
const scripts = (
  JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
).scripts

describe("the bench README's commands", () => {
  it('shows a quick run of every bench but the ones that need Ceph, and each script exists', () => {
    const run = commands.filter((command) => command.run).map((command) => command.line)
    const benchScripts = Object.keys(scripts).filter((name) => name.startsWith('bench'))
    const shown = new Set(
      commands.map((command) => /^(?:\S+=\S+ )*npm run (\S+)/.exec(command.line)?.[1]),
    )
    for (const script of benchScripts) expect(shown, `${script} is shown`).toContain(script)
    for (const script of benchScripts.filter(
      (name) => !['bench:s3', 'bench:migrate', 'bench:all'].includes(name),
    )) {
      expect(
        run.some((line) => line.startsWith(`npm run ${script} -- --quick`)),
        script,
      ).toBe(true)
    }
  })

  // Checking flags starts a node process or two and nothing else: these run side by side.
  it.concurrent.each(commands.filter((command) => !command.run).map((command) => command.line))(
    '%s: its flags parse',
    async (line) => {
      const result = await bash(withDryRun(line))
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/: would run [a-z0-9-]+ with /)
    },
  )

  it.each(commands.filter((command) => command.run).map((command) => command.line))(
    '%s: runs end to end and prints its summary',
    async (line) => {
      const result = await bash(line)
      expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0)
      expect(result.stdout).toMatch(/^Cairn .*benchmark|^Cairn hostile probe/m)
      expect(result.stdout).toMatch(
        /^summary\n\s+bench\s+figure\s+Cairn\s+baseline\s+ratio\n\s+\S+/m,
      )
      const written = /^bench: results in (bench\/results\/\S+\.md)$/m.exec(result.stderr)?.[1]
      if (!line.includes('--results')) {
        expect(written).toBeUndefined()
        return
      }
      // The results file is the report as printed, with the command and the machine; removed
      // again so that the test leaves the work tree as it found it.
      expect(written).toMatch(/^bench\/results\/\d{4}-\d{2}-\d{2}-[0-9a-f]+-[a-z0-9-]+\.md$/)
      const path = join(root, written ?? '')
      try {
        const text = await readFile(path, 'utf8')
        expect(text).toContain(`- command: \`${line}\``)
        expect(text).toContain(`- node: ${process.version}`)
        const title = result.stdout.split('\n').find((text) => text.startsWith('Cairn '))
        expect(title).toBeDefined()
        expect(text).toContain(`\n${title ?? ''}\n`)
      } finally {
        await rm(path, { force: true })
      }
    },
  )
})
