import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../../cli-error'

/** The server's entry beside this CLI's, in a checkout or an install of both. */
const SERVER_MAIN = fileURLToPath(new URL('../../server/dist/main.js', import.meta.url))

export default defineCommand({
  meta: {
    name: 'export',
    description:
      'Disaster recovery: write every unit and version of a data directory or bucket as an export archive in plain text, with no server running',
  },
  args: {
    decrypt: {
      type: 'boolean',
      description:
        'write the states in plain text (required: the archive then needs the care the keys do)',
    },
    'data-dir': {
      type: 'string',
      description: 'the data directory to read (the server -data-dir)',
    },
    'encryption-keys': {
      type: 'string',
      description: 'the key-encryption keys, as the server takes them: <id>=file:<path>,...',
    },
    prefix: { type: 'string', description: 'only the units whose IDs start with this' },
    out: { type: 'string', description: 'the archive file (standard output without it)' },
  },
  async run({ args }) {
    if (args.decrypt !== true) {
      throw new UsageError(
        'cairn admin export writes every state in plain text: say so with --decrypt',
      )
    }
    if (!existsSync(SERVER_MAIN)) {
      throw new CLIError(
        `the offline export runs the server's own code, which is not built beside this CLI (${SERVER_MAIN}): run it where the server is installed, or build it with npm run build`,
      )
    }
    // The server's settings: these two, and its SVC_ variables (SVC_STORAGE=s3, SVC_S3_BUCKET, ...).
    const settings = [
      ...(args['data-dir'] === undefined ? [] : ['-data-dir', args['data-dir']]),
      ...(args['encryption-keys'] === undefined
        ? []
        : ['-encryption-keys', args['encryption-keys']]),
    ]
    const own = [
      '--decrypt',
      ...(args.prefix === undefined ? [] : ['--prefix', args.prefix]),
      ...(args.out === undefined ? [] : ['--out', args.out]),
    ]
    const child = spawn(process.execPath, [SERVER_MAIN, 'export', ...own, ...settings], {
      stdio: 'inherit',
    })
    const code = await new Promise<number>((resolve, reject) => {
      child.on('error', reject)
      child.on('exit', (exitCode, signal) => {
        resolve(exitCode ?? (signal === null ? 1 : 128))
      })
    })
    process.exitCode = code
  },
})
