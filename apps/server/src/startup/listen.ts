import { readFile } from 'node:fs/promises'
import type { Config } from '../config/config'
import { earlyListener, type EarlyListener } from '../http/early-listener'
import type { Logger } from '../log/logger'
import { refuse } from './refuse'

/**
 * Binds the main listener, with TLS when `-tls-cert` and `-tls-key` are given, before anything is
 * written to the data directory or printed: a port in use stops the start and leaves the data
 * directory as it was. Refuses in one line a certificate or key it cannot use, and a port it
 * cannot bind.
 */
export async function listen(config: Config, log: Logger): Promise<EarlyListener> {
  let early: EarlyListener
  try {
    const tls = config.tls === undefined ? undefined : await readTls(config.tls)
    early = earlyListener({ limits: config.limits, tls, log })
  } catch (error) {
    refuse(`cannot serve HTTPS with -tls-cert and -tls-key: ${(error as Error).message}`)
  }
  await early.listen(config.port, config.host).catch((error: unknown) => {
    const where = `${config.host}:${config.port}`
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      refuse(
        `cannot listen on ${where}: the port is in use; stop what holds it or choose another -port (PORT)`,
      )
    }
    refuse(`cannot listen on ${where}: ${(error as Error).message}`)
  })
  return early
}

/** The certificate and key files of -tls-cert and -tls-key, or a refusal naming the one at fault. */
async function readTls(tls: {
  certPath: string
  keyPath: string
}): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (path: string, flag: string) =>
    readFile(path).catch((error: unknown) =>
      refuse(`cannot read ${flag} ${path}: ${(error as Error).message}`),
    )
  return { cert: await read(tls.certPath, '-tls-cert'), key: await read(tls.keyPath, '-tls-key') }
}
