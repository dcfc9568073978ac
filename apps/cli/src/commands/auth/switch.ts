import { defineCommand } from 'citty'
import { CLIError } from '../../cli-error'
import { Credentials } from '../../config/credentials'
import { normalizeServer } from '../../config/server-url'
import { Output } from '../../output/output'
import { shown } from '../../output/shown'

export default defineCommand({
  meta: {
    name: 'switch',
    description: 'Make a server you are logged in to the one commands use when none is named',
  },
  args: {
    url: {
      type: 'positional',
      description: 'the server, as cairn auth status lists it',
      required: true,
    },
    json: { type: 'boolean', description: 'print the result as JSON' },
  },
  async run({ args }) {
    const server = normalizeServer(args.url, 'the server')
    const credentials = new Credentials()
    const saved = Object.keys(await credentials.all()).sort()
    if (!saved.includes(server)) {
      throw new CLIError(
        saved.length === 0
          ? `not logged in to ${server}: run cairn login --server ${server} first`
          : `not logged in to ${server} (logged in to ${saved.join(', ')}): run cairn login --server ${server} first`,
      )
    }
    await credentials.setDefault(server)
    new Output(args.json === true).result(
      { server, default: true },
      () => shown`Commands now use ${server} when none is named.`,
    )
  },
})
