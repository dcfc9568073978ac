import { ConfigError } from './config-error'
import type { SettingValues } from './read-settings'

/** Where `-storage s3` keeps everything (credentials come from the standard AWS chain). */
export interface S3Settings {
  readonly bucket: string
  /** Every key under this prefix (`cairn/`), so one bucket can hold other things too. */
  readonly prefix: string
  readonly region: string
  /** A custom endpoint (Ceph RGW, MinIO, R2); absent for AWS. */
  readonly endpoint: string | undefined
  /** Path-style URLs (`endpoint/bucket/key`): on by default with a custom endpoint. */
  readonly pathStyle: boolean
  /** How long one request to the store may go without progress before it fails. */
  readonly requestTimeoutMs: number
  /** Attempts per request to the store, the first included, before a 503. */
  readonly maxAttempts: number
}

/**
 * The S3 settings when `-storage s3`; undefined for the other stores. The region falls back on
 * the AWS variables, and path style is on with a custom endpoint.
 *
 * @throws ConfigError without a bucket, or with S3 flags for another store
 */
export function s3Settings(values: SettingValues, env: NodeJS.ProcessEnv): S3Settings | undefined {
  if (values.storage !== 's3') {
    const stray = (['s3-bucket', 's3-prefix', 's3-endpoint'] as const).find(
      (name) => values[name] !== undefined && values[name] !== '',
    )
    if (stray !== undefined) {
      throw new ConfigError(`-${stray} is for -storage s3, but the storage is ${values.storage}`)
    }
    return undefined
  }
  const bucket = values['s3-bucket']
  if (bucket === undefined) {
    throw new ConfigError(
      '-storage s3 needs -s3-bucket (SVC_S3_BUCKET): the bucket to keep units in',
    )
  }
  const endpoint = values['s3-endpoint']
  const prefix = values['s3-prefix']
  return Object.freeze({
    bucket,
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    region: values['s3-region'] ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
    endpoint,
    pathStyle: values['s3-path-style'] ?? endpoint !== undefined,
    requestTimeoutMs: values['s3-request-timeout'],
    maxAttempts: values['s3-max-attempts'],
  })
}
