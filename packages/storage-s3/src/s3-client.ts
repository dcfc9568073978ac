import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { S3Client } from '@aws-sdk/client-s3'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import type { S3StoreOptions } from './s3-store-options'

const DEFAULT_REGION = 'us-east-1'
const DEFAULT_MAX_ATTEMPTS = 4
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000
const MAX_SOCKETS = 64

/** The SDK client with the settings every S3-compatible store needs. */
export function createS3Client(options: S3StoreOptions): S3Client {
  const agentOptions = { keepAlive: true, maxSockets: MAX_SOCKETS }
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  return new S3Client({
    region: options.region ?? DEFAULT_REGION,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    // A custom endpoint (RGW, MinIO) rarely has a wildcard DNS name per bucket: path style then.
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    // The SDK's standard strategy: exponential backoff with jitter on 5xx, throttling and
    // transport errors, within a retry quota.
    retryMode: 'standard',
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    // Otherwise a streamed body is sent aws-chunked with a trailing checksum, which not every
    // S3-compatible server accepts (Ceph RGW answers 411).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({
      connectionTimeout: Math.min(DEFAULT_CONNECTION_TIMEOUT_MS, requestTimeout),
      // "Without progress" is the socket's idle timeout: the handler's `requestTimeout` bounds the
      // whole exchange (a large state's too) and, unless told to throw, only logs a warning, so a
      // store that accepts the connection and then stops answering would hold the request forever.
      socketTimeout: requestTimeout,
      httpAgent: new HttpAgent(agentOptions),
      httpsAgent: new HttpsAgent(agentOptions),
    }),
  })
}
