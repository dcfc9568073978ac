// `npm test`: install what is missing and build, then the checks (typecheck, lint, dependency
// rules, the WebAssembly check, formatting) and both test tiers. Extra arguments go to vitest.
//
// The checks run beside the tests, at the lowest CPU priority, taking the cycles the suites leave
// while they wait on servers, Terraform and Ceph: on a 2-core machine they end before the
// integration tier does, instead of taking about three minutes before the first test. Their output
// is printed as a block when they end; the run fails if either part failed.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { bootstrap, env, root, run, turboBin } from './bootstrap.mjs'

bootstrap()
run(join(root, 'node_modules', '.bin', 'prettier'), ['--check', '--log-level=warn', '.'])

/** Runs the checks niced, two at a time; answers their exit status and what they printed. */
function startChecks() {
  const args = ['run', 'typecheck', 'lint', 'deps', 'check-wasm', '--concurrency=2']
  const child = spawn('nice', ['-n', '19', turboBin, ...args, '--output-logs=new-only'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (text) => (output += text))
  child.stderr.setEncoding('utf8').on('data', (text) => (output += text))
  return new Promise((resolve) => {
    child.on('error', (error) =>
      resolve({ code: 1, output: `could not run the checks (nice, turbo): ${error.message}` }),
    )
    child.on('close', (code) => resolve({ code: code ?? 1, output }))
  })
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
