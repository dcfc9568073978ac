import { S3Error } from './s3-errors'
import { readXml } from './s3-xml-reader'

/** One part named in a CompleteMultipartUpload request. */
export interface CompletedPart {
  partNumber: number
  etag: string
}

/** S3's limit on the parts of one upload (the API reference, "multipart upload limits"). */
const MAX_PARTS = 10_000

/**
 * Reads the parts of a `CompleteMultipartUpload` document (the S3 API reference): each
 * `<Part>` with its `<PartNumber>` and `<ETag>`; checksum elements are accepted and ignored, since
 * each part's checksum was verified when it arrived. Any body that is not such a document, well
 * formed, is `MalformedXML`.
 *
 * @throws S3Error `MalformedXML`
 */
export function parseCompletedParts(body: Uint8Array): CompletedPart[] {
  const root = readXml(body, { maxDepth: 3 })
  if (root.name !== 'CompleteMultipartUpload') {
    throw malformedParts('the body is not a CompleteMultipartUpload document')
  }
  const parts: CompletedPart[] = []
  for (const part of root.children) {
    if (part.name !== 'Part') continue
    const number = part.children.find((child) => child.name === 'PartNumber')?.text.trim()
    const etag = part.children.find((child) => child.name === 'ETag')?.text.trim()
    if (number === undefined || etag === undefined || !/^\d{1,5}$/.test(number)) {
      throw malformedParts('each Part needs a PartNumber and an ETag')
    }
    parts.push({ partNumber: Number(number), etag: unquote(etag) })
  }
  if (parts.length === 0 || parts.length > MAX_PARTS) {
    throw malformedParts(`a CompleteMultipartUpload names from 1 to ${MAX_PARTS} parts`)
  }
  return parts
}

function malformedParts(reason: string): S3Error {
  return new S3Error('MalformedXML', reason)
}

/** An ETag without its quotes. */
export function unquote(etag: string): string {
  return etag.replace(/^"(.*)"$/, '$1')
}
