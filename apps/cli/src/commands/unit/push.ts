import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { defineCommand } from 'citty'
import { CLIError } from '../../cli-error'
import { openContext } from '../../context'
import { withProgress } from '../../output/progress'
import { shown } from '../../output/shown'
import { common, lockIdArg, unitArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'push',
    description: "Upload a state as the unit's new version (a file, or - for stdin)",
  },
  args: {
    ...unitArg,
    file: {
      type: 'positional',
      description: 'the state file, or - for standard input',
      required: true,
    },
    ...common,
    force: { type: 'boolean', description: 'accept a state that goes back in serial' },
    ...lockIdArg,
  },
  async run({ args }) {
    const context = await openContext(args)
    const lockId = await context.lockFor(args.id, args['lock-id'])
    let body: ReadableStream<Uint8Array>
    let size: number | undefined
    if (args.file === '-') {
      body = Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>
    } else {
      size = await stat(args.file).then(
        (info) => info.size,
        () => {
          throw new CLIError(`cannot read ${args.file}`)
        },
      )
      body = Readable.toWeb(createReadStream(args.file)) as ReadableStream<Uint8Array>
    }
    const version = await context.client.units.upload(
      args.id,
      withProgress(shown`pushing ${args.id}`, size, body),
      {
        ...(lockId === undefined ? {} : { ifLockedBy: lockId }),
        force: args.force === true,
      },
    )
    context.out.result(
      version,
      () =>
        shown`Pushed ${args.id}: version ${version.timestamp}, serial ${version.serial ?? '-'}, sha256 ${version.sha256}.`,
    )
  },
})
