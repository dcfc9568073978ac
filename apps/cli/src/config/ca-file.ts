import { readFile } from 'node:fs/promises'
import { CLIError } from '../cli-error'

/** Where the CAs trusted for the last server opened came from, to name it when they do not fit. */
let inUse: string | undefined

/** `--ca-file <path>`, `CAIRN_CA_FILE <path>` or the login's, for advice; undefined when none. */
export function caFileInUse(): string | undefined {
  return inUse
}

/**
 * The certificate authorities to trust beside Node's own, for a server whose certificate a
 * private or self-signed CA issued: the PEM file `--ca-file` names, else `CAIRN_CA_FILE`, else
 * the one `--ca-file` named when logging in to that server (`remembered`); none when none is set
 * (NODE_EXTRA_CA_CERTS, which Node reads itself, then still applies).
 *
 * A client given CAs of its own stops seeing NODE_EXTRA_CA_CERTS on Node 20, so that file's
 * certificates are added too: both keep working together.
 */
export async function caCertificates(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  remembered?: string,
): Promise<string[] | undefined> {
  const fromEnv = env['CAIRN_CA_FILE'] === '' ? undefined : env['CAIRN_CA_FILE']
  const path = flag ?? fromEnv ?? remembered
  inUse = undefined
  if (path === undefined) return undefined
  const source =
    flag !== undefined
      ? '--ca-file'
      : fromEnv !== undefined
        ? 'CAIRN_CA_FILE'
        : 'the CA file saved at login'
  inUse = `${source} ${path}`
  let pem: string
  try {
    pem = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new CLIError(`cannot read ${source} ${path} (${code}): name a CA certificate in PEM`)
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new CLIError(
      `${source} ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----): name the certificate of the CA that issued the server's`,
    )
  }
  const extra = env['NODE_EXTRA_CA_CERTS']
  // Node itself warns at start when this file cannot be read; nothing more to say here.
  const also =
    extra === undefined || extra === '' ? '' : await readFile(extra, 'utf8').catch(() => '')
  return also.includes('-----BEGIN CERTIFICATE-----') ? [pem, also] : [pem]
}
