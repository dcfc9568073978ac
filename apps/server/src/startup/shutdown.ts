import type { Server } from 'node:http'
import type { Logger } from '../log/logger'

/**
 * On SIGTERM or SIGINT: stop accepting connections, let requests in flight finish (up to the
 * shutdown timeout), release storage, exit. A second signal exits at once.
 */
export function stopOnSignals(
  server: Server,
  shutdownTimeoutMs: number,
  log: Logger,
  close: () => Promise<void>,
): void {
  let stopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal })
      process.exit(1)
    }
    stopping = true
    log.info('stopping: finishing requests in flight', { signal })
    const deadline = setTimeout(() => {
      log.warn('requests still in flight at the shutdown timeout: closing them')
      server.closeAllConnections()
    }, shutdownTimeoutMs)
    deadline.unref()
    server.close(() => {
      clearTimeout(deadline)
      void close().finally(() => {
        log.info('stopped')
        process.exit(0)
      })
    })
    server.closeIdleConnections()
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

/** Closes a listener and every connection it holds. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve()
    })
    server.closeAllConnections()
  })
}
