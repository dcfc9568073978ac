import { S3Error } from './s3-errors'

/** An element of a request document: its name (without a namespace prefix), text and children. */
export interface XmlElement {
  name: string
  /** The element's own text, entities resolved (the text of its children is theirs). */
  text: string
  children: XmlElement[]
}

export interface XmlReadOptions {
  /** The deepest nesting accepted, the root being 1: what the document's schema allows. */
  maxDepth: number
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })
/** A name as S3's documents use them, with an optional namespace prefix (`s3:Part`). */
const NAME = /[A-Za-z_][A-Za-z0-9._-]*(?::[A-Za-z_][A-Za-z0-9._-]*)?/y
const SPACE = /[ \t\r\n]*/y
const ATTRIBUTE = /[ \t\r\n]+[A-Za-z_][A-Za-z0-9._:-]*[ \t\r\n]*=[ \t\r\n]*(?:"[^"<]*"|'[^'<]*')/y
/** Characters XML 1.0 forbids in a document, even as references (section 2.2). */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function malformed(reason: string): S3Error {
  return new S3Error(
    'MalformedXML',
    `The XML you provided was not well-formed or did not validate against our published schema: ${reason}`,
  )
}

/**
 * Reads a small request document (CompleteMultipartUpload) strictly, in one pass and in time
 * linear in its size: UTF-8, an optional declaration, comments and processing instructions, one
 * root element, attributes (read and dropped), character data, CDATA, and the five named and the
 * numeric character references. No DOCTYPE, hence no entity of the sender's own. Anything else,
 * or nesting deeper than the schema has, is S3's `MalformedXML`, never another error.
 *
 * @throws S3Error `MalformedXML`
 */
export function readXml(bytes: Uint8Array, options: XmlReadOptions): XmlElement {
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    throw malformed('the body is not UTF-8')
  }
  if (NOT_XML.test(text)) throw malformed('the body holds a character XML does not allow')
  return new Reader(text.startsWith('\uFEFF') ? text.slice(1) : text, options.maxDepth).document()
}

class Reader {
  readonly #text: string
  readonly #maxDepth: number
  #at = 0

  constructor(text: string, maxDepth: number) {
    this.#text = text
    this.#maxDepth = maxDepth
  }

  document(): XmlElement {
    if (this.#text.startsWith('<?xml')) this.#skipPast('?>', 'an XML declaration')
    this.#misc()
    if (this.#text[this.#at] !== '<') throw malformed('no root element')
    const root = this.#element()
    this.#misc()
    if (this.#at !== this.#text.length) throw malformed('content after the root element')
    return root
  }

  /** Whitespace, comments and processing instructions, outside the root. */
  #misc(): void {
    for (;;) {
      this.#match(SPACE)
      if (this.#text.startsWith('<!--', this.#at)) this.#comment()
      else if (this.#text.startsWith('<?', this.#at))
        this.#skipPast('?>', 'a processing instruction')
      else return
    }
  }

  /** An element and everything in it, read with a stack rather than recursion. */
  #element(): XmlElement {
    const stack: XmlElement[] = []
    let root: XmlElement | undefined
    for (;;) {
      const open = this.#startTag()
      const parent = stack.at(-1)
      parent?.children.push(open.element)
      root ??= open.element
      if (!open.empty) {
        if (stack.length + 1 > this.#maxDepth) throw malformed('elements nested too deep')
        stack.push(open.element)
      }
      // Content until the next start tag, or until the stack empties.
      for (;;) {
        const current = stack.at(-1)
        if (current === undefined) return root
        const next = this.#text.indexOf('<', this.#at)
        if (next === -1) throw malformed(`the element ${current.name} is not closed`)
        current.text += this.#characters(this.#text.slice(this.#at, next))
        this.#at = next
        if (this.#text.startsWith('</', next)) {
          this.#endTag(current.name)
          stack.pop()
        } else if (this.#text.startsWith('<!--', next)) this.#comment()
        else if (this.#text.startsWith('<![CDATA[', next)) {
          const end = this.#text.indexOf(']]>', next + 9)
          if (end === -1) throw malformed('a CDATA section is not closed')
          current.text += this.#text.slice(next + 9, end)
          this.#at = end + 3
        } else if (this.#text.startsWith('<?', next)) {
          this.#skipPast('?>', 'a processing instruction')
        } else if (this.#text.startsWith('<!', next)) {
          throw malformed('a declaration inside an element')
        } else break
      }
    }
  }

  #startTag(): { element: XmlElement; empty: boolean } {
    this.#at += 1
    const name = this.#match(NAME)
    if (name === undefined) throw malformed('an element without a valid name')
    while (this.#match(ATTRIBUTE) !== undefined) {
      // Attributes (xmlns) carry nothing S3's request documents need.
    }
    this.#match(SPACE)
    const empty = this.#text.startsWith('/>', this.#at)
    if (!empty && this.#text[this.#at] !== '>')
      throw malformed(`the start tag of ${name} is broken`)
    this.#at += empty ? 2 : 1
    return { element: { name: localName(name), text: '', children: [] }, empty }
  }

  #endTag(expected: string): void {
    this.#at += 2
    const name = this.#match(NAME)
    this.#match(SPACE)
    if (name === undefined || localName(name) !== expected || this.#text[this.#at] !== '>') {
      throw malformed(`the element ${expected} is not closed by its own end tag`)
    }
    this.#at += 1
  }

  #comment(): void {
    const end = this.#text.indexOf('-->', this.#at + 4)
    if (end === -1) throw malformed('a comment is not closed')
    this.#at = end + 3
  }

  #skipPast(end: string, what: string): void {
    const at = this.#text.indexOf(end, this.#at)
    if (at === -1) throw malformed(`${what} is not closed`)
    this.#at = at + end.length
  }

  #match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.#at
    const found = pattern.exec(this.#text)
    if (found === null) return undefined
    this.#at = pattern.lastIndex
    return found[0]
  }

  /** Character data with its references resolved; a `>` alone is allowed, as in XML. */
  #characters(raw: string): string {
    if (!raw.includes('&')) return raw
    let out = ''
    let from = 0
    for (let amp = raw.indexOf('&'); amp !== -1; amp = raw.indexOf('&', from)) {
      const semicolon = raw.indexOf(';', amp)
      if (semicolon === -1 || semicolon - amp > 12) throw malformed('an unterminated reference')
      out += raw.slice(from, amp) + reference(raw.slice(amp + 1, semicolon))
      from = semicolon + 1
    }
    return out + raw.slice(from)
  }
}

/** The character a reference's name (between `&` and `;`) stands for. */
function reference(name: string): string {
  const named = NAMED[name]
  if (named !== undefined) return named
  const code = /^#x[0-9A-Fa-f]{1,8}$/.test(name)
    ? Number.parseInt(name.slice(2), 16)
    : /^#[0-9]{1,9}$/.test(name)
      ? Number.parseInt(name.slice(1), 10)
      : undefined
  if (code === undefined) throw malformed(`an unknown reference &${name.slice(0, 12)};`)
  if (!isXmlChar(code)) throw malformed(`a reference to a character XML does not allow`)
  return String.fromCodePoint(code)
}

/** XML 1.0's `Char` production: what a character reference may name. */
function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  )
}

function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1)
}
