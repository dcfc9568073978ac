import { defineCommand } from 'citty'
import { CLIError } from '../../cli-error'
import { Credentials } from '../../config/credentials'
import { lookUpServer } from '../../config/server-url'
import { common } from '../_shared'

export default defineCommand({
  meta: {
    name: 'token',
    description:
      "Print the saved access token of the server named or the default one, as gh auth token does (for TF_HTTP_PASSWORD in a CI job's script)",
  },
  args: { ...common },
  async run({ args }) {
    const credentials = new Credentials()
    const named = await lookUpServer(args.server, process.env, credentials)
    if (named.kind !== 'chosen') {
      throw new CLIError('no server named and none logged in to: cairn login first')
    }
    const profile = await credentials.get(named.server)
    if (profile === undefined)
      throw new CLIError(`not logged in to ${named.server}: cairn login first`)
    process.stdout.write(`${profile.access_token}\n`)
  },
})
