import { S3Error } from './s3-errors'

/** The namespace of S3's documents. */
const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/'

/** An element's content: text, or child elements in order (an array repeats the element). */
export type XmlValue = string | number | boolean | XmlContent
export interface XmlContent {
  [name: string]: XmlValue | readonly XmlValue[] | undefined
}

/** An S3 XML document: `<?xml …?><Root xmlns="…">…</Root>`. Undefined fields are left out. */
export function xmlDocument(root: string, content: XmlContent): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${S3_NAMESPACE}">${children(content)}</${root}>`
}

function children(content: XmlContent): string {
  let out = ''
  for (const [name, value] of Object.entries(content)) {
    if (value === undefined) continue
    const values: readonly XmlValue[] = Array.isArray(value) ? value : [value as XmlValue]
    for (const item of values) out += `<${name}>${inner(item)}</${name}>`
  }
  return out
}

function inner(value: XmlValue): string {
  return typeof value === 'object' ? children(value) : escapeXml(String(value))
}

/** Text made safe for an XML element. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char)
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
}

/** One part named in a CompleteMultipartUpload request. */
export interface CompletedPart {
  partNumber: number
  etag: string
}

/**
 * Reads the parts of a `CompleteMultipartUpload` document (the S3 API reference): each
 * `<Part>` with its `<PartNumber>` and `<ETag>`; checksum elements are accepted and ignored, since
 * each part's checksum was verified when it arrived.
 *
 * @throws S3Error `MalformedXML`
 */
export function parseCompletedParts(xml: string): CompletedPart[] {
  if (!/<CompleteMultipartUpload[\s>]/.test(xml)) {
    throw new S3Error('MalformedXML', 'the body is not a CompleteMultipartUpload document')
  }
  const parts: CompletedPart[] = []
  for (const [, body = ''] of xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)) {
    const number = /<PartNumber>\s*(\d{1,5})\s*<\/PartNumber>/.exec(body)?.[1]
    const etag = /<ETag>([\s\S]*?)<\/ETag>/.exec(body)?.[1]
    if (number === undefined || etag === undefined) {
      throw new S3Error('MalformedXML', 'each Part needs a PartNumber and an ETag')
    }
    parts.push({ partNumber: Number(number), etag: unquote(unescapeXml(etag.trim())) })
  }
  if (parts.length === 0) {
    throw new S3Error('MalformedXML', 'a CompleteMultipartUpload names at least one Part')
  }
  return parts
}

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (entity, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X'))
      return String.fromCodePoint(parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10))
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[name.toLowerCase()] ?? entity
  })
}

/** An ETag without its quotes. */
export function unquote(etag: string): string {
  return etag.replace(/^"(.*)"$/, '$1')
}
