// `npm test`: install what is missing, build, typecheck, lint, then run every suite (unit,
// server-over-socket, real Terraform, crash). Extra arguments go to vitest.
import { join } from 'node:path'
import { bootstrap, root, run, turbo } from './bootstrap.mjs'

bootstrap()
// The checks, two at a time (this machine's cores); each prints a line when it passes. turbo
// replays a check whose inputs have not changed since it last passed.
turbo([
  'run',
  'typecheck',
  'lint',
  'deps',
  'check-wasm',
  '--concurrency=2',
  '--output-logs=new-only',
])
run(join(root, 'node_modules', '.bin', 'prettier'), ['--check', '--log-level=warn', '.'])
run(join(root, 'node_modules', '.bin', 'vitest'), ['run', ...process.argv.slice(2)])
