// `npm run cli -- <args>`: the cairn CLI from a checkout (built first if needed, like npm start).
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bootstrap, root } from './bootstrap.mjs'

bootstrap({ stdoutClean: true })
await import(pathToFileURL(join(root, 'apps', 'cli', 'dist', 'main.js')).href)
