import { CairnApiError, CairnError, CertificateError, visibleText } from '@cairn/sdk'
import { CLIError, EXIT, NegativeAnswer } from './cli-error'
import { root } from './commands/index'
import { caFileInUse } from './config/ca-file'
import { contextInUse } from './context'
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
      const line = explain(error, contextInUse(), caFileInUse())
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

function explain(
  error: unknown,
  opened: { server: string; loggedIn: boolean } | undefined,
  caFile: string | undefined,
): string {
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
    if (opened === undefined) return `${error.message} (${error.code})`
    const { server, loggedIn } = opened
    return loggedIn
      ? `${server} refused the credentials (expired, revoked or mistyped): run cairn login --server ${server} (cairn auth status shows which it refused)`
      : `not logged in to ${server}: run cairn login --server ${server}`
  }
  if (error instanceof CairnApiError) return `${error.message} (${error.code})`
  if (error instanceof CairnError || error instanceof CLIError) return error.message
  return error instanceof Error ? error.message : String(error)
}

await main()
