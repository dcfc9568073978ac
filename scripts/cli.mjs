// `npm run cli -- <args>` and `./cairn <args>`: the cairn CLI from a checkout. It builds first
// only when a source changed since the last build, with all of that on stderr; otherwise it
// starts the CLI at once and prints nothing of its own, since Terraform's credential_process
// and scripts read what it prints.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bootstrap, root } from './bootstrap.mjs'

bootstrap({ stdoutClean: true, unlessCurrent: ['apps/cli/dist/main.js'] })
await import(pathToFileURL(join(root, 'apps', 'cli', 'dist', 'main.js')).href)
