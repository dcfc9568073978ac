import { CairnApiError, visibleText } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError } from '../cli-error'
import { openContext } from '../context'
import { shown } from '../output/shown'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'creds',
    description:
      'Print S3 session credentials for the server: as shell exports, or with --json for an AWS credential_process',
  },
  args: {
    ...common,
    json: {
      type: 'boolean',
      description:
        "print AWS's process-credentials JSON on one line (credential_process = cairn creds --json)",
    },
  },
  async run({ args }) {
    const context = await openContext(args)
    // Asked even without a login: a server with authentication disabled says so itself.
    const creds = await context.client.auth.issueS3Credentials().catch((error: unknown) => {
      if (context.loggedIn || !(error instanceof CairnApiError && error.code === 'unauthorized')) {
        throw error
      }
      throw new CLIError(
        `not logged in to ${context.server}: run cairn login --server ${context.server} first`,
      )
    })
    if (args.json === true) {
      // What an AWS SDK parses: the JSON on one line, and nothing else on stdout.
      process.stdout.write(`${JSON.stringify(creds)}\n`)
      return
    }
    process.stdout.write(
      [
        `export AWS_ACCESS_KEY_ID=${shellQuote(visibleText(creds.AccessKeyId))}`,
        `export AWS_SECRET_ACCESS_KEY=${shellQuote(visibleText(creds.SecretAccessKey))}`,
        `export AWS_SESSION_TOKEN=${shellQuote(visibleText(creds.SessionToken))}`,
        '',
      ].join('\n'),
    )
    context.out.note(shown`# expires ${creds.Expiration}`)
  },
})

/** A word the shell reads back as itself: bare when it is plainly safe, single-quoted otherwise. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_.\-+/=]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`
}
