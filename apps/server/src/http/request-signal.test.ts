import { EventEmitter } from 'node:events'
import type { Context } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AppEnv } from './app-env'
import { requestSignal } from './request-signal'

/** A request's context as @hono/node-server gives it: its socket and its response. */
function contextOf(socket: { destroyed: boolean; readable: boolean }) {
  const sock = Object.assign(new EventEmitter(), socket)
  const outgoing = new EventEmitter()
  const c = {
    req: { raw: new Request('http://x/') },
    env: { incoming: { socket: sock }, outgoing },
  } as unknown as Context<AppEnv>
  return { c, socket: sock, outgoing }
}

describe('requestSignal', () => {
  it('has fired already for a request whose client closed before it was handled', () => {
    const { c } = contextOf({ destroyed: true, readable: false })
    expect(requestSignal(c).aborted).toBe(true)
  })

  it('fires when the connection closes before the answer is whole', () => {
    const { c, socket } = contextOf({ destroyed: false, readable: true })
    const signal = requestSignal(c)
    expect(signal.aborted).toBe(false)
    socket.emit('close')
    expect(signal.aborted).toBe(true)
  })

  it('stops watching a kept-alive connection once the answer is sent', () => {
    const { c, socket, outgoing } = contextOf({ destroyed: false, readable: true })
    const signal = requestSignal(c)
    outgoing.emit('finish')
    expect(socket.listenerCount('close')).toBe(0)
    socket.emit('close')
    expect(signal.aborted).toBe(false)
  })
})
