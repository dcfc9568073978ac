import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  parseCredentials,
  SigV4Error,
  verifySignature,
  type ParsedCredentials,
  type SignedRequest,
} from '../src/index'
import { collect } from './streams'

/** What the server made of one request. */
export interface Received {
  request: SignedRequest
  credentials?: ParsedCredentials
  body?: Buffer
  error?: SigV4Error
}

/** A request as a Node server receives it: nothing decoded. */
export function signedRequestOf(req: IncomingMessage): SignedRequest {
  const url = req.url ?? '/'
  const question = url.indexOf('?')
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value
  }
  return {
    method: req.method ?? 'GET',
    path: question === -1 ? url : url.slice(0, question),
    query: question === -1 ? '' : url.slice(question + 1),
    headers,
  }
}

const LIST = `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>tfstate</Name><Prefix>env:/</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`

/**
 * A local S3 stand-in that verifies every request with this package: what real clients send, over
 * a real socket. `secret` answers the secret of an access key.
 */
export async function startS3Server(secret: (accessKeyId: string) => string): Promise<{
  endpoint: string
  received: Received[]
  [Symbol.asyncDispose]: () => Promise<void>
}> {
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    const record: Received = { request: signedRequestOf(req) }
    received.push(record)
    void (async () => {
      try {
        record.credentials = parseCredentials(record.request, { service: 's3', now: Date.now() })
        const verified = await verifySignature(
          record.request,
          record.credentials,
          secret(record.credentials.accessKeyId),
        )
        record.body = await collect(verified.body(req))
      } catch (error) {
        if (!(error instanceof SigV4Error)) throw error
        record.error = error
        res.writeHead(error.status, { 'content-type': 'application/xml' })
        res.end(`<Error><Code>${error.code}</Code><Message>${error.message}</Message></Error>`)
        return
      }
      if (req.method === 'GET' && record.request.query.includes('list-type=2')) {
        res.writeHead(200, { 'content-type': 'application/xml' }).end(LIST)
      } else if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('stored bytes')
      } else {
        res.writeHead(200, { etag: '"0"' }).end()
      }
    })()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received,
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}
