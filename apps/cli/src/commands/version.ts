import { CairnApiError, createClient } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { version } from '../../package.json'
import { Credentials } from '../config/credentials'
import { lookUpServer } from '../config/server-url'
import { fetchFor } from '../context'
import { Output } from '../output/output'
import { shown } from '../output/shown'
import { common } from './_shared'

/** How long to wait for the server's version: a slow or gone server never holds this up for long. */
const ASK_FOR_MS = 3000

export default defineCommand({
  meta: {
    name: 'version',
    description: 'Print the version of cairn, and of the server when one is configured',
  },
  args: { ...common },
  async run({ args }) {
    const out = new Output(args.json === true)
    const server = await configuredServer(args)
    const answer = server === undefined ? undefined : await serverVersion(server, args)
    out.result(
      {
        cairn: version,
        server:
          server === undefined
            ? null
            : { url: server, version: answer?.version ?? null, error: answer?.error ?? null },
      },
      () =>
        [
          `cairn ${version}`,
          ...(server === undefined || answer?.version === undefined
            ? []
            : [shown`server ${server} ${answer.version}`]),
        ].join('\n'),
    )
    if (server !== undefined && answer?.error !== undefined && !out.json) {
      out.note(shown`server ${server}: version unknown (${answer.error})`)
    }
  },
})

/** The server commands would use, if one is configured; never a guess, never a failure. */
async function configuredServer(args: {
  server?: string | undefined
}): Promise<string | undefined> {
  const found = await lookUpServer(args.server, process.env, new Credentials())
  return found.kind === 'chosen' ? found.server : undefined
}

/** The server's version from `GET /version`, or why there is none; it never throws. */
async function serverVersion(
  server: string,
  args: { 'ca-file'?: string | undefined },
): Promise<{ version?: string; error?: string }> {
  try {
    const doFetch = await fetchFor(args, process.env, await new Credentials().get(server))
    const bounded: typeof fetch = (input, init) =>
      doFetch(input, { ...init, signal: AbortSignal.timeout(ASK_FOR_MS) })
    return await createClient({ baseUrl: server, fetch: bounded }).server.version()
  } catch (error) {
    if (error instanceof CairnApiError && error.status === 404) {
      return { error: 'the server is older than GET /version' }
    }
    return { error: error instanceof Error ? error.message : String(error) }
  }
}
