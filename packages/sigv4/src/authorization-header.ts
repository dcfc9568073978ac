import { parseCredential, type Credential } from './credential-scope'
import { SigV4Error } from './errors'

export const ALGORITHM = 'AWS4-HMAC-SHA256'

/** What an `Authorization: AWS4-HMAC-SHA256 ...` header says. */
export interface AuthorizationHeader extends Credential {
  signedHeaders: string[]
  signature: string
}

function malformed(message: string): SigV4Error {
  return new SigV4Error(
    'AuthorizationHeaderMalformed',
    `The authorization header is malformed; ${message}`,
  )
}

/**
 * Parses the header form (AWS General Reference, "Add the signature to the HTTP request"):
 * `AWS4-HMAC-SHA256 Credential=..., SignedHeaders=a;b, Signature=hex`, the three parts in any order,
 * spaces after the commas optional.
 */
export function parseAuthorizationHeader(value: string): AuthorizationHeader {
  const trimmed = value.trim()
  const space = trimmed.indexOf(' ')
  const algorithm = space === -1 ? trimmed : trimmed.slice(0, space)
  if (algorithm !== ALGORITHM) {
    throw new SigV4Error(
      'InvalidArgument',
      `Unsupported Authorization Type: only ${ALGORITHM} is supported`,
    )
  }
  const parts = new Map<string, string>()
  for (const part of trimmed.slice(space + 1).split(',')) {
    const eq = part.indexOf('=')
    if (eq === -1) throw malformed(`the part ${JSON.stringify(part.trim())} is not name=value`)
    const name = part.slice(0, eq).trim()
    if (parts.has(name)) throw malformed(`${name} is given twice`)
    parts.set(name, part.slice(eq + 1).trim())
  }
  const credentialValue = parts.get('Credential')
  const signedHeadersValue = parts.get('SignedHeaders')
  const signature = parts.get('Signature')
  if (credentialValue === undefined) throw malformed('the Credential part is missing')
  if (signedHeadersValue === undefined) throw malformed('the SignedHeaders part is missing')
  if (signature === undefined) throw malformed('the Signature part is missing')
  const credential = parseCredential(credentialValue)
  if (!credential) {
    throw malformed(
      `the Credential ${JSON.stringify(credentialValue)} is not <key>/<YYYYMMDD>/<region>/<service>/aws4_request`,
    )
  }
  if (!/^[0-9a-f]{64}$/.test(signature))
    throw malformed('the Signature is not 64 lower-case hex digits')
  return {
    ...credential,
    signedHeaders: parseSignedHeaders(signedHeadersValue, malformed),
    signature,
  }
}

/** `host;x-amz-date` to names; each lower case and listed once. */
export function parseSignedHeaders(value: string, fail: (message: string) => SigV4Error): string[] {
  const names = value.split(';')
  for (const name of names) {
    if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(name)) {
      throw fail(`SignedHeaders holds ${JSON.stringify(name)}, not a lower-case header name`)
    }
  }
  if (new Set(names).size !== names.length) throw fail('SignedHeaders names a header twice')
  return names
}
