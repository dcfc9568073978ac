import { SignatureV4 } from '@smithy/signature-v4'
import { createHash, createHmac } from 'node:crypto'
import type { SignedRequest } from '../src/index'
import { Sha256 } from '../src/sha256'

export const ACCESS_KEY = 'AKIDCAIRNTEST'
export const SECRET = 'cairn/secret+key/for/tests'
export const NOW = Date.UTC(2026, 10, 22, 3, 51, 58)
export const AMZ_DATE = '20261122T035158Z'
export const SCOPE = '20261122/us-east-1/s3/aws4_request'

/** Signs a request as an S3 client would, with smithy's signer, and gives it as a server sees it. */
export async function signS3(input: {
  method: string
  path: string
  query?: Record<string, string>
  headers: Record<string, string>
  date?: number
  service?: string
}): Promise<SignedRequest> {
  const signer = new SignatureV4({
    service: input.service ?? 's3',
    region: 'us-east-1',
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET },
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  })
  const signed = await signer.sign(
    {
      method: input.method,
      protocol: 'https:',
      hostname: 'cairn.example.com',
      path: input.path,
      query: input.query ?? {},
      headers: { host: 'cairn.example.com', ...input.headers },
    },
    { signingDate: new Date(input.date ?? NOW) },
  )
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value
  return {
    method: input.method,
    path: input.path,
    query: Object.entries(input.query ?? {})
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&'),
    headers,
  }
}

/** The signing key, derived here independently of the code under test. */
export function signingKey(secret = SECRET, scope = SCOPE): Buffer {
  let key: Buffer = Buffer.from(`AWS4${secret}`)
  for (const part of scope.split('/')) key = createHmac('sha256', key).update(part).digest()
  return key
}

const hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex')

/**
 * An aws-chunked body (the S3 "multiple chunks" pages): signed chunks when `seed` is given (each
 * signature chained from it), then the trailers, signed too when signing.
 */
export function encodeChunked(
  chunks: (string | Buffer)[],
  options: { seed?: string; trailers?: [string, string][]; key?: Buffer } = {},
): Buffer {
  const key = options.key ?? signingKey()
  let previous = options.seed
  const sign = (algorithm: string, hashes: string[]) => {
    const signature = createHmac('sha256', key)
      .update([algorithm, AMZ_DATE, SCOPE, previous, ...hashes].join('\n'))
      .digest('hex')
    previous = signature
    return signature
  }
  const parts: Buffer[] = []
  for (const chunk of [...chunks, '']) {
    const data = Buffer.from(chunk)
    const extension =
      options.seed === undefined
        ? ''
        : `;chunk-signature=${sign('AWS4-HMAC-SHA256-PAYLOAD', [hex(''), hex(data)])}`
    parts.push(Buffer.from(`${data.length.toString(16)}${extension}\r\n`))
    if (data.length > 0) parts.push(data, Buffer.from('\r\n'))
  }
  const trailers = options.trailers ?? []
  for (const [name, value] of trailers) parts.push(Buffer.from(`${name}:${value}\r\n`))
  if (options.seed !== undefined && trailers.length > 0) {
    const canonical = trailers.map(([name, value]) => `${name}:${value}\n`).join('')
    parts.push(
      Buffer.from(
        `x-amz-trailer-signature:${sign('AWS4-HMAC-SHA256-TRAILER', [hex(canonical)])}\r\n`,
      ),
    )
  }
  parts.push(Buffer.from('\r\n'))
  return Buffer.concat(parts)
}

/** Base64 of a digest, as S3 checksum headers carry it. */
export function checksumOf(algorithm: 'sha1' | 'sha256' | 'md5', data: string | Buffer): string {
  return createHash(algorithm).update(data).digest('base64')
}
