import { decodeAwsChunked } from './aws-chunked'
import { BodyVerifier, type BodyPlan } from './body-checks'
import type { ChunkSigner } from './chunk-signer'

/**
 * The body as the client meant it, every check made as it streams. Errors come from the iterator:
 * a consumer that stores the bytes commits only once it finished without one.
 */
export async function* verifiedBody(
  raw: AsyncIterable<Uint8Array>,
  plan: BodyPlan,
  chunked: { signer: () => ChunkSigner | undefined } | undefined,
): AsyncGenerator<Uint8Array> {
  const verifier = new BodyVerifier(plan)
  let trailers: ReadonlyMap<string, string> = new Map()
  const source = chunked
    ? decodeAwsChunked(raw, {
        signer: chunked.signer(),
        announcedTrailers: new Set(plan.trailers.keys()),
        onTrailers: (received) => {
          trailers = received
        },
      })
    : raw
  for await (const chunk of source) {
    verifier.update(chunk)
    yield chunk
  }
  verifier.finish(trailers)
}
