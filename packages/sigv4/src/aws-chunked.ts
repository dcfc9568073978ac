import { createHash, type Hash } from 'node:crypto'
import type { ChunkSigner } from './chunk-signer'
import { SigV4Error } from './errors'
import { sha256Hex } from './sha256'

export interface AwsChunkedOptions {
  /** For STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]: every chunk must carry a valid signature. */
  signer: ChunkSigner | undefined
  /** The trailers x-amz-trailer announced (lower case); any other trailer is refused. */
  announcedTrailers: ReadonlySet<string>
  /** Receives the trailers (name in lower case, value trimmed) once the body has ended well. */
  onTrailers: (trailers: ReadonlyMap<string, string>) => void
  /** Largest signed chunk accepted, since it is held until its signature is checked; 16 MiB. */
  maxSignedChunkBytes?: number
}

export const MAX_SIGNED_CHUNK_BYTES = 16 * 1024 * 1024
/** A size line is `<hex>;chunk-signature=<64 hex>`, a trailer line a checksum: far below this. */
const MAX_LINE_BYTES = 4096
const CR = 13
const LF = 10
const TRAILER_SIGNATURE = 'x-amz-trailer-signature'

function framing(message: string): SigV4Error {
  return new SigV4Error('InvalidRequest', `Malformed aws-chunked body: ${message}`)
}

type Phase = 'size' | 'data' | 'data-end' | 'trailer' | 'done'

/**
 * Decodes an aws-chunked body: `<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n` ... then
 * `0[;chunk-signature=<sig>]\r\n`, trailer lines `name:value\r\n` (and `x-amz-trailer-signature`
 * when signed) and an empty line (S3 API Reference, "Transferring payload in multiple chunks" and
 * "... including trailing headers"). Chunk boundaries need not match the incoming pieces.
 *
 * Unsigned chunks are passed on as they arrive. A signed chunk is held until its signature has
 * been checked, so no byte a consumer sees was forged (even for a moment, before the error);
 * that is why signed chunks are capped (16 MiB: SDKs send 64 KiB, S3 itself caps nothing lower).
 */
export async function* decodeAwsChunked(
  raw: AsyncIterable<Uint8Array>,
  options: AwsChunkedOptions,
): AsyncGenerator<Uint8Array> {
  const { signer, announcedTrailers } = options
  const maxSigned = options.maxSignedChunkBytes ?? MAX_SIGNED_CHUNK_BYTES
  let phase: Phase = 'size'
  // Read through a call: the closures below move the phase on, which narrowing cannot see.
  const current = (): Phase => phase
  let line: number[] = []
  let remaining = 0
  let endSeen = 0
  let signature = ''
  let held: Uint8Array[] = []
  let hash: Hash | undefined
  const trailers = new Map<string, string>()
  let trailerSignature: string | undefined

  const readSizeLine = (text: string): void => {
    const [sizeText = '', ...extensions] = text.split(';')
    if (!/^[0-9a-fA-F]{1,13}$/.test(sizeText)) {
      throw framing(`the chunk size line ${JSON.stringify(text.slice(0, 80))} is not hex`)
    }
    const size = Number.parseInt(sizeText, 16)
    signature = ''
    for (const extension of extensions) {
      const [name, value] = extension.split('=', 2)
      if (name?.trim() === 'chunk-signature' && value !== undefined) signature = value.trim()
    }
    if (signer) {
      if (!/^[0-9a-f]{64}$/.test(signature)) throw framing('a chunk has no chunk-signature')
      if (size > maxSigned) throw framing(`a signed chunk is larger than ${maxSigned} bytes`)
      hash = createHash('sha256')
    }
    if (size === 0) {
      signer?.verifyChunk(signature, sha256Hex(''))
      phase = 'trailer'
    } else {
      remaining = size
      phase = 'data'
    }
  }

  const readTrailerLine = (text: string): void => {
    if (text === '') {
      if (signer && trailers.size > 0) {
        if (trailerSignature === undefined) throw framing('the trailer is not signed')
        const canonical = [...trailers].map(([name, value]) => `${name}:${value}\n`).join('')
        signer.verifyTrailer(trailerSignature, canonical)
      }
      phase = 'done'
      return
    }
    const colon = text.indexOf(':')
    if (colon <= 0)
      throw framing(`the trailer line ${JSON.stringify(text.slice(0, 80))} is not name:value`)
    const name = text.slice(0, colon).trim().toLowerCase()
    const value = text.slice(colon + 1).trim()
    if (name === TRAILER_SIGNATURE && signer && trailerSignature === undefined) {
      trailerSignature = value
      return
    }
    if (!announcedTrailers.has(name)) {
      throw framing(`the trailer ${name} was not announced in x-amz-trailer`)
    }
    if (trailers.has(name) || trailerSignature !== undefined) {
      throw framing(`the trailer ${name} is repeated or follows the trailer signature`)
    }
    trailers.set(name, value)
  }

  for await (const piece of raw) {
    let i = 0
    while (i < piece.length) {
      const at = current()
      if (at === 'size' || at === 'trailer') {
        const byte = piece[i++] as number
        if (byte !== LF) {
          line.push(byte)
          if (line.length > MAX_LINE_BYTES) throw framing('a line is too long')
          continue
        }
        if (line.pop() !== CR) throw framing('a line does not end in CRLF')
        const text = Buffer.from(line).toString('latin1')
        line = []
        if (at === 'size') readSizeLine(text)
        else readTrailerLine(text)
      } else if (at === 'data') {
        const n = Math.min(remaining, piece.length - i)
        const slice = piece.subarray(i, i + n)
        i += n
        remaining -= n
        if (signer) {
          // Copied: the producer may reuse its buffer once this piece has been consumed.
          held.push(Uint8Array.from(slice))
          hash?.update(slice)
        } else {
          yield slice
        }
        if (remaining === 0) phase = 'data-end'
      } else if (at === 'data-end') {
        const byte = piece[i++]
        if (byte !== (endSeen === 0 ? CR : LF)) throw framing('chunk data is not followed by CRLF')
        if (++endSeen === 2) {
          endSeen = 0
          phase = 'size'
          if (signer) {
            signer.verifyChunk(signature, hash?.digest('hex') ?? '')
            const chunks = held
            held = []
            yield* chunks
          }
        }
      } else {
        throw framing('bytes follow the end of the body')
      }
    }
  }
  if (current() !== 'done') {
    throw new SigV4Error('IncompleteBody', 'The aws-chunked body ended before its final chunk')
  }
  options.onTrailers(trailers)
}
