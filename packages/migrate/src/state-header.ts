/** How much of a state's head is read for its serial and lineage. */
const HEAD_BYTES = 64 * 1024

/** What the head of a state says of it: null fields when it does not say (or is no state). */
export interface StateHeader {
  serial: number | null
  lineage: string | null
  /** False when the head is not the start of a JSON object (the body is kept as it is). */
  json: boolean
}

const SERIAL = /"serial"\s*:\s*(\d+)/
const LINEAGE = /"lineage"\s*:\s*"([^"\\]*)"/

/**
 * The serial and lineage of a Terraform state from its first bytes: Terraform writes them before
 * the resources, so the first 64 KiB hold them. Enough for a dry run's gaps and lineage changes;
 * the server reads the whole body itself when it stores it.
 */
export async function readHeader(body: AsyncIterable<Uint8Array>): Promise<StateHeader> {
  const chunks: Uint8Array[] = []
  let size = 0
  const iterator = body[Symbol.asyncIterator]()
  try {
    while (size < HEAD_BYTES) {
      const next = await iterator.next()
      if (next.done === true) break
      chunks.push(next.value)
      size += next.value.byteLength
    }
  } finally {
    await iterator.return?.()
  }
  return headerOf(Buffer.concat(chunks).subarray(0, HEAD_BYTES).toString('utf8'))
}

export function headerOf(head: string): StateHeader {
  const json = /^\s*\{/.test(head)
  const serial = json ? SERIAL.exec(head) : null
  const lineage = json ? LINEAGE.exec(head) : null
  return {
    serial: serial?.[1] === undefined ? null : Number(serial[1]),
    lineage: lineage?.[1] ?? null,
    json,
  }
}
