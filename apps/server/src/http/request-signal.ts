import type { Context } from 'hono'
import type { AppEnv } from './app-env'

/**
 * A signal that fires when the request's client goes away: its connection closed before the
 * answer was whole. @hono/node-server's `c.req.raw.signal` misses a client that closed before the
 * request reached its handler (a busy server reads requests late: the probe's clients drop their
 * connections at once), so the socket itself is watched too: already closed, the signal has fired.
 * Under `app.request()` (tests) it is the request's own signal.
 */
export function requestSignal(c: Context<AppEnv>): AbortSignal {
  const given = c.req.raw.signal
  const env = c.env as AppEnv['Bindings'] | undefined
  const socket = env?.incoming?.socket
  const outgoing = env?.outgoing
  if (socket === undefined || outgoing === undefined) return given
  const gone = new AbortController()
  const abort = () => {
    gone.abort(new Error('the client closed the connection'))
  }
  if (socket.destroyed || !socket.readable) {
    abort()
  } else {
    socket.once('close', abort)
    // A kept-alive connection serves more requests: stop watching once this one is answered.
    const done = () => {
      socket.off('close', abort)
    }
    outgoing.once('finish', done)
    outgoing.once('close', done)
  }
  return AbortSignal.any([given, gone.signal])
}
