import { CairnApiError, CairnError } from '@cairn/sdk'
import { CLIError, EXIT } from './cli-error'
import { root } from './commands/index'
import { runCli } from './run'

/** Turns any failure into one line on stderr and an exit code: 1 failure, 2 bad usage. */
async function main(): Promise<void> {
  const args = process.argv.slice(2)
  try {
    await runCli(root, args)
  } catch (error) {
    process.stderr.write(`cairn: ${explain(error, serverOf(args))}\n`)
    process.exitCode =
      error instanceof CLIError
        ? error.exitCode
        : error instanceof Error && error.name === 'CLIError'
          ? EXIT.usage
          : EXIT.failure
  }
}

function explain(error: unknown, server: string | undefined): string {
  if (error instanceof CairnApiError && error.code === 'unauthorized') {
    const target = server ?? process.env['SVC_SERVER_URL'] ?? 'the server'
    const flag = server === undefined ? '' : ` --server ${server}`
    return `not logged in to ${target} (or the login has expired): run cairn login${flag}`
  }
  if (error instanceof CairnApiError) return `${error.message} (${error.code})`
  if (error instanceof CairnError || error instanceof CLIError) return error.message
  return error instanceof Error ? error.message : String(error)
}

/** The --server the user gave, to repeat it in advice. */
function serverOf(args: string[]): string | undefined {
  const at = args.findIndex((arg) => arg === '--server' || arg.startsWith('--server='))
  if (at === -1) return undefined
  const arg = args[at] as string
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[at + 1]
}

await main()
