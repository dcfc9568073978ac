import { SigV4Error } from './errors'
import { parseHeaderForm } from './header-form'
import type { ParseOptions, ParsedCredentials } from './parsed-credentials'
import { parsePresignedForm } from './presigned-form'
import { parseQuery } from './query-string'
import { header, type SignedRequest } from './signed-request'

/**
 * Reads who signed a request, and how, without the secret: the server learns the access key and
 * the session token here, derives the secret, then calls verifySignature.
 * @throws SigV4Error
 */
export function parseCredentials(request: SignedRequest, options: ParseOptions): ParsedCredentials {
  const authorization = header(request, 'authorization')
  const query = parseQuery(request.query)
  const presigned = Object.hasOwn(query, 'X-Amz-Algorithm')
  if (authorization !== undefined && presigned) {
    throw new SigV4Error(
      'InvalidArgument',
      'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified',
    )
  }
  if (authorization !== undefined) return parseHeaderForm(request, authorization, options)
  if (presigned) return parsePresignedForm(request, query, options)
  throw new SigV4Error('MissingAuthenticationToken', 'The request carries no SigV4 authentication')
}
