import { S3Error } from './s3-errors'

/** Encryption at rest as the S3 surface can promise it: the key-encryption key new objects get. */
export interface AtRest {
  /** The ID of the KEK that encrypts what is written now (`-encryption-keys`' first). */
  readonly kek: string
}

/** What a write's encryption headers asked for, honoured: the headers to answer with. */
export type HonouredEncryption = Record<string, string>

const SSE = 'x-amz-server-side-encryption'
const KMS_KEY = 'x-amz-server-side-encryption-aws-kms-key-id'
const CUSTOMER_HEADERS = [
  'x-amz-server-side-encryption-customer-algorithm',
  'x-amz-server-side-encryption-customer-key',
  'x-amz-server-side-encryption-customer-key-md5',
]

/**
 * The server-side encryption a request's headers ask for (DESIGN section 15), honoured or refused,
 * never ignored. Terraform's `s3` backend sends them with `encrypt = true` (`AES256`),
 * `kms_key_id` (`aws:kms` and the key) and `sse_customer_key` (SSE-C).
 *
 * - `AES256`, or `aws:kms` without a key or naming the KEK that encrypts now: honoured when the
 *   server encrypts at rest (every object that carries state is then encrypted under that KEK),
 *   answered with the headers S3 gives.
 * - Either without encryption at rest, `aws:kms` naming another key, any other algorithm, and
 *   SSE-C (Cairn would have to hold the client's key for every other way in, which cannot read
 *   without it): refused with S3's `InvalidArgument`, the header named, before anything is read.
 *
 * `reads` says the request only reads: the SSE-C headers are what a read sends, and are refused
 * as a write's are; the other headers belong to writes and are not looked at.
 *
 * @throws S3Error (`InvalidArgument`)
 */
export function serverSideEncryption(
  header: (name: string) => string | undefined,
  atRest: AtRest | undefined,
  options: { reads?: boolean } = {},
): HonouredEncryption {
  const customer = CUSTOMER_HEADERS.find((name) => header(name) !== undefined)
  if (customer !== undefined) {
    throw refusal(
      customer,
      "customer-provided keys (SSE-C, the s3 backend's sse_customer_key) are not supported: every other way in to the state would need the key. Encrypt at rest on the server (-encryption-keys) or with OpenTofu on the client",
    )
  }
  if (options.reads === true) return {}
  const algorithm = header(SSE)
  const kmsKey = header(KMS_KEY)
  if (algorithm === undefined) {
    if (kmsKey !== undefined) throw refusal(KMS_KEY, `${KMS_KEY} goes with ${SSE}: aws:kms`)
    return {}
  }
  if (algorithm !== 'AES256' && algorithm !== 'aws:kms') {
    throw refusal(SSE, `${SSE} ${JSON.stringify(algorithm)} is not supported (AES256 or aws:kms)`)
  }
  if (atRest === undefined) {
    throw refusal(
      SSE,
      `${SSE} ${algorithm} asks for encryption at rest, which this server is not configured for: start it with -encryption-keys, or leave encrypt and kms_key_id out of the backend`,
    )
  }
  if (algorithm === 'AES256') {
    if (kmsKey !== undefined) throw refusal(KMS_KEY, `${KMS_KEY} goes with ${SSE}: aws:kms`)
    return { [SSE]: 'AES256' }
  }
  if (kmsKey !== undefined && keyIdOf(kmsKey) !== atRest.kek) {
    throw refusal(
      KMS_KEY,
      `KMS key ${JSON.stringify(kmsKey)} is not the key this server encrypts with; name ${atRest.kek}, or leave kms_key_id out`,
    )
  }
  return { [SSE]: 'aws:kms', [KMS_KEY]: atRest.kek }
}

/** A KMS key as Terraform may name it: its ID, an alias, or an ARN ending in either. */
function keyIdOf(given: string): string {
  const last = given.slice(given.lastIndexOf(':') + 1)
  const name =
    last.startsWith('key/') || last.startsWith('alias/') ? last.slice(last.indexOf('/') + 1) : last
  return name
}

function refusal(argument: string, message: string): S3Error {
  return new S3Error('InvalidArgument', `${message} (${argument})`)
}
