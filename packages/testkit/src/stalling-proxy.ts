import { connect, createServer, type Socket } from 'node:net'

/** A TCP proxy on 127.0.0.1 in front of a server, which can stop answering and answer again. */
export interface StallingProxy {
  /** `http://127.0.0.1:<port>`: the proxy's address. */
  readonly endpoint: string
  /**
   * Stops answering, as a frozen server does: connections are still accepted (the kernel's
   * backlog takes them) but nothing is read from them or sent on, in either direction.
   */
  stall(): void
  /** Answers again: what waited is passed on, and held connections reach the server. */
  resume(): void
  close(): Promise<void>
}

/**
 * Starts a proxy to `target` (`http://host:port`). It stands in for a server's process being
 * stopped (SIGSTOP) where the server is shared with other suites and must keep answering them.
 */
export function startStallingProxy(target: string): Promise<StallingProxy> {
  const { hostname, port } = new URL(target)
  let stalled = false
  const sockets = new Set<Socket>()
  /** Connections accepted while stalled, connected to the server on resume. */
  const held: Socket[] = []

  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const pipe = (client: Socket) => {
    const upstream = connect(Number(port), hostname)
    track(upstream)
    // Not `pipe`: a drain would set a paused socket flowing again. Test traffic is small, so
    // nothing waits on the other side's buffer.
    client.on('data', (chunk) => upstream.write(chunk))
    upstream.on('data', (chunk) => client.write(chunk))
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  }

  const server = createServer((client) => {
    track(client)
    if (stalled) {
      client.pause()
      held.push(client)
    } else pipe(client)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      if (address === null || typeof address === 'string') {
        reject(new Error('the proxy has no TCP address'))
        return
      }
      resolve({
        endpoint: `http://127.0.0.1:${address.port}`,
        stall: () => {
          stalled = true
          for (const socket of sockets) socket.pause()
        },
        resume: () => {
          stalled = false
          for (const socket of sockets) socket.resume()
          for (const client of held.splice(0)) {
            if (!client.destroyed) pipe(client)
          }
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => {
              done()
            })
          }),
      })
    })
  })
}
