// `npm test`: install what is missing, build, typecheck, lint, then run every suite (unit,
// server-over-socket, real Terraform, crash). Extra arguments go to vitest.
import { join } from 'node:path'
import { bootstrap, root, run, turbo } from './bootstrap.mjs'

bootstrap()
turbo(['run', 'typecheck', 'lint', '--output-logs=errors-only'])
run(join(root, 'node_modules', '.bin', 'prettier'), ['--check', '--log-level=warn', '.'])
run(join(root, 'node_modules', '.bin', 'vitest'), ['run', ...process.argv.slice(2)])
