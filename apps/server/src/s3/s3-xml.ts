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

/**
 * Text made safe for an XML element, and for the terminal that may show it: the markup characters
 * as entities, and every control character (C0, DEL, C1), every character XML 1.0 does not allow
 * and every lone surrogate percent-encoded as UTF-8 (`\u001b` as `%1B`), as the request line
 * carried it. No raw control character reaches a client, and the document always parses.
 */
export function escapeXml(text: string): string {
  return text.replace(UNSAFE, (char) => ENTITIES[char] ?? percentEncoded(char))
}

/** Markup, controls, U+FFFE and U+FFFF, and surrogates not in a pair. */
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[&<>"'\u0000-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

function percentEncoded(char: string): string {
  // A lone surrogate has no UTF-8 form: it is shown as the replacement character's.
  const bytes = Buffer.from(/[\uD800-\uDFFF]/.test(char) ? '\uFFFD' : char, 'utf8')
  return Array.from(bytes, (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(
    '',
  )
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
}
