import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
} from 'node:http'
import type { AddressInfo } from 'node:net'

/** A request as a client sent it, headers (signature included) and all, without its body. */
export interface RecordedRequest {
  method: string
  /** The request target as sent: path and query. */
  url: string
  headers: IncomingHttpHeaders
}

/** What the target answered a request sent again. */
export interface Replayed {
  status: number
  body: string
}

/**
 * A plain-http proxy in front of a server, as a logging middlebox would be: it passes each request
 * on unchanged (the Host header too, so a signature over it still holds) and keeps a record of
 * it, so that a test can send a request a real client signed again.
 */
export class RecordingProxy {
  readonly recorded: RecordedRequest[] = []
  readonly #server: Server
  readonly #target: URL

  private constructor(server: Server, target: URL) {
    this.#server = server
    this.#target = target
  }

  /** A proxy on a free port of 127.0.0.1 in front of the plain-http server at `target`. */
  static async start(target: string): Promise<RecordingProxy> {
    const url = new URL(target)
    const server = createServer()
    const proxy = new RecordingProxy(server, url)
    server.on('request', (incoming, outgoing) => {
      proxy.recorded.push({
        method: incoming.method ?? 'GET',
        url: incoming.url ?? '/',
        headers: { ...incoming.headers },
      })
      const onward = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(outgoing)
        },
      )
      onward.on('error', () => {
        outgoing.destroy()
      })
      incoming.pipe(onward)
    })
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', resolve)
    })
    return proxy
  }

  /** The proxy's base URL. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  /** Sends a recorded request (it had no body) to the target again, byte for byte. */
  replay(request: RecordedRequest): Promise<Replayed> {
    return new Promise((resolve, reject) => {
      const sent = httpRequest(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
        },
        (answer) => {
          let body = ''
          answer.setEncoding('utf8')
          answer.on('data', (chunk: string) => (body += chunk))
          answer.on('end', () => {
            resolve({ status: answer.statusCode ?? 0, body })
          })
        },
      )
      sent.on('error', reject)
      sent.end()
    })
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => {
      this.#server.close(() => {
        resolve()
      })
    })
  }
}
