import { CairnApiError, CairnError, CertificateError, visibleText } from '@cairn/sdk'
import { CLIError, EXIT, NegativeAnswer } from './cli-error'
import { root } from './commands/index'
import { runCli } from './run'

/**
 * Turns any failure into one line on stderr and an exit code: 1 failure, 2 bad usage. The line
 * shows its control characters written out: a server's message may carry them.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2)
  try {
    await runCli(root, args)
  } catch (error) {
    if (!(error instanceof NegativeAnswer)) {
      const line = explain(error, flagOf(args, '--server'), caFileOf(args))
      process.stderr.write(`cairn: ${visibleText(line)}\n`)
    }
    process.exitCode =
      error instanceof CLIError
        ? error.exitCode
        : error instanceof Error && error.name === 'CLIError'
          ? EXIT.usage
          : EXIT.failure
  }
}

function explain(error: unknown, server: string | undefined, caFile: string | undefined): string {
  if (error instanceof CertificateError && error.untrustedIssuer) {
    // A self-signed certificate is its own CA: the file to give is the certificate itself.
    const which =
      error.reason === 'DEPTH_ZERO_SELF_SIGNED_CERT'
        ? 'the certificate itself (it is self-signed), in PEM,'
        : 'the certificate (PEM) of the CA that issued it'
    const advice =
      caFile === undefined
        ? `give ${which} with --ca-file <file> or CAIRN_CA_FILE=<file> (NODE_EXTRA_CA_CERTS=<file> works too, for every Node.js program)`
        : `${caFile} does not hold the CA that issued it: give ${which} with --ca-file <file> or CAIRN_CA_FILE=<file>`
    return `cannot trust the certificate of ${error.server} (${error.reason}): ${advice}`
  }
  if (error instanceof CairnApiError && error.code === 'unauthorized') {
    const target = server ?? process.env['SVC_SERVER_URL'] ?? 'the server'
    const flag = server === undefined ? '' : ` --server ${server}`
    return `not logged in to ${target} (or the login has expired): run cairn login${flag}`
  }
  if (error instanceof CairnApiError) return `${error.message} (${error.code})`
  if (error instanceof CairnError || error instanceof CLIError) return error.message
  return error instanceof Error ? error.message : String(error)
}

/** A flag's value as the user gave it (--server, to repeat it in advice). */
function flagOf(args: string[], flag: string): string | undefined {
  const at = args.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`))
  if (at === -1) return undefined
  const arg = args[at] as string
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[at + 1]
}

/** Where the CAs the CLI was told to trust came from, to say so when they do not fit. */
function caFileOf(args: string[]): string | undefined {
  const flag = flagOf(args, '--ca-file')
  if (flag !== undefined) return `--ca-file ${flag}`
  const env = process.env['CAIRN_CA_FILE']
  return env === undefined || env === '' ? undefined : `CAIRN_CA_FILE ${env}`
}

await main()
