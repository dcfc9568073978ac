import { SigV4Error } from './errors'
import type { ParsedCredentials } from './parsed-credentials'
import { header, type SignedRequest } from './signed-request'

/** The scope must be dated the day of the request and name this service. */
export function checkScope(
  scope: ParsedCredentials['scope'],
  amzDate: string,
  service: string,
  fail: (message: string) => SigV4Error,
): void {
  if (scope.date !== amzDate.slice(0, 8)) {
    throw fail(`the credential date ${scope.date} is not the date of X-Amz-Date ${amzDate}`)
  }
  if (scope.service !== service) {
    throw fail(`incorrect service "${scope.service}". This endpoint belongs to "${service}".`)
  }
}

/**
 * Only what the client listed is signed (a proxy may add headers), but all of it: host always
 * (SigV4 requires it), and every listed header must have come.
 */
export function checkSignedHeaders(
  request: SignedRequest,
  signedHeaders: string[],
  fail: (message: string) => SigV4Error,
): void {
  if (!signedHeaders.includes('host')) throw fail('SignedHeaders must include host')
  for (const name of signedHeaders) {
    if (header(request, name) === undefined) {
      throw new SigV4Error(
        'SignatureDoesNotMatch',
        `The request signature we calculated does not match the signature you provided: the signed header ${name} is missing`,
      )
    }
  }
}
