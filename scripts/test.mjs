// `npm test`: install what is missing and build, then the checks (typecheck, lint, dependency
// rules, the WebAssembly check, formatting) and both test tiers. Extra arguments go to vitest.
//
// The checks run beside the tests, at the lowest CPU priority, taking the cycles the suites leave
// while they wait on servers, Terraform and Ceph: on a 2-core machine they end before the
// integration tier does, instead of taking about three minutes before the first test. Their output
// is printed as a block when they end; the run fails if either part failed.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { bootstrap, env, root, turboBin } from './bootstrap.mjs'

bootstrap()

/** Runs `command args` niced; answers its exit status and what it printed. */
function niced(command, args) {
  const child = spawn('nice', ['-n', '19', command, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (text) => (output += text))
  child.stderr.setEncoding('utf8').on('data', (text) => (output += text))
  return new Promise((resolve) => {
    child.on('error', (error) =>
      resolve({ code: 1, output: `could not run ${command} (through nice): ${error.message}` }),
    )
    child.on('close', (code) => resolve({ code: code ?? 1, output }))
  })
}

/**
 * The checks, niced: the typecheck and lint over one TypeScript program (a fresh clone has no
 * turbo cache to replay, and one program costs half of two), the dependency rules and the
 * WebAssembly check through turbo, and the formatting check. Answers their exit status and what
 * they printed.
 */
async function startChecks() {
  const prettier = join(root, 'node_modules', '.bin', 'prettier')
  const results = await Promise.all([
    niced(process.execPath, [join(root, 'scripts', 'check.mjs'), 'typecheck', 'lint']),
    niced(turboBin, ['run', 'deps', 'check-wasm', '--output-logs=new-only']),
    niced(prettier, ['--check', '--log-level=warn', '.']),
  ])
  const [, , format] = results
  if (format.code === 0) format.output = 'cairn: every file is formatted (prettier --check .)'
  return {
    code: results.find((result) => result.code !== 0)?.code ?? 0,
    output: results.map((result) => result.output.trimEnd()).join('\n'),
  }
}

/** Runs vitest in the foreground; answers its exit status. */
function runTests() {
  const vitest = join(root, 'node_modules', '.bin', 'vitest')
  const child = spawn(vitest, ['run', ...process.argv.slice(2)], {
    cwd: root,
    env,
    stdio: 'inherit',
  })
  return new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`cairn: could not run vitest: ${error.message}\n`)
      resolve(1)
    })
    child.on('close', (code) => resolve(code ?? 1))
  })
}

const checks = startChecks().then((result) => {
  // Only turbo's lines about the checks and their own one-line results, or everything on failure.
  const lines = result.output.split('\n')
  const shown =
    result.code === 0 ? lines.filter((line) => /cairn: |✔|Tasks:|Cached:/.test(line)) : lines
  process.stdout.write(`\n${shown.join('\n')}\n`)
  if (result.code !== 0) process.stderr.write('cairn: the checks failed (above)\n')
  return result.code
})
const tests = await runTests()
const checked = await checks
process.exit(tests !== 0 ? tests : checked)
