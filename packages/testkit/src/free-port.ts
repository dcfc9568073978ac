import { createServer } from 'node:net'

/** A TCP port of 127.0.0.1 that was free a moment ago, for a server that must know it in advance. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => {
        if (typeof address === 'object' && address !== null) resolve(address.port)
        else reject(new Error('no port'))
      })
    })
  })
}
