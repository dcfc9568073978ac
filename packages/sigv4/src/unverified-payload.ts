import { planBody } from './body-checks'
import { verifiedBody } from './body'
import { isStreaming, parsePayloadMode } from './payload-mode'
import { header, type SignedRequest } from './signed-request'

/** A body decoded without a signature check. */
export interface UnverifiedPayload {
  decodedLength: number | undefined
  body(raw: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>
}

/**
 * The body of a request whose signature nobody checks (a server run with authentication
 * disabled): aws-chunked is still decoded, and the payload hash, checksums and lengths the request
 * declares are still verified as it streams, so what is stored is what the client meant. Chunk and
 * trailer signatures are not checked, since there is no secret to check them with.
 *
 * @throws SigV4Error `InvalidArgument` for an x-amz-content-sha256 that is no payload mode
 */
export function unverifiedPayload(request: SignedRequest): UnverifiedPayload {
  const declared = header(request, 'x-amz-content-sha256')
  const payload = parsePayloadMode(declared ?? 'UNSIGNED-PAYLOAD')
  const plan = planBody(request, payload)
  const chunked = isStreaming(payload) ? { signer: () => undefined } : undefined
  return { decodedLength: plan.length, body: (raw) => verifiedBody(raw, plan, chunked) }
}
