import { describe, expect, it } from 'vitest'
import { S3Error } from './s3-errors'
import { parseCompletedParts } from './s3-completed-parts'
import { readXml } from './s3-xml-reader'

const text = (value: string) => new TextEncoder().encode(value)

/** A seeded generator (mulberry32), so a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Reads `body` as a completion: parts, or S3's MalformedXML and nothing else. */
function outcomeOf(body: Uint8Array): 'parts' | 'MalformedXML' {
  try {
    parseCompletedParts(body)
    return 'parts'
  } catch (error) {
    if (error instanceof S3Error && error.code === 'MalformedXML') return 'MalformedXML'
    throw new Error(`a body of ${body.byteLength} bytes made the reader throw ${String(error)}`, {
      cause: error,
    })
  }
}

const VALID =
  '<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><ETag>&#34;0123abcd&#34;</ETag><PartNumber>1</PartNumber></Part><Part><ETag>"ffff"</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>'

/** Pieces of XML, well-formed and not, that random documents are made of. */
const PIECES = [
  '<CompleteMultipartUpload>',
  '</CompleteMultipartUpload>',
  '<Part>',
  '</Part>',
  '<PartNumber>1</PartNumber>',
  '<ETag>"a"</ETag>',
  '<ETag>',
  '</ETag>',
  '<!--',
  '-->',
  '<![CDATA[',
  ']]>',
  '<?x',
  '?>',
  '&',
  '&amp;',
  '&#x110000;',
  '&#xFFFFFFFF;',
  '&#99999999999;',
  '&#0;',
  '&#xD800;',
  '&#x1F600;',
  '&lt',
  ';',
  '<',
  '>',
  '/>',
  '"',
  "'",
  ' a="b"',
  " a='<'",
  '<!DOCTYPE a>',
  '\u0000',
  '\u001b[31m',
  '\ud800',
  '\uffff',
  'é',
  ' ',
  '\n',
]

describe('reading request XML', () => {
  it('answers the valid document with its parts', () => {
    expect(outcomeOf(text(VALID))).toBe('parts')
  })

  it('throws nothing but MalformedXML for random bytes', () => {
    const next = random(1)
    for (let round = 0; round < 3000; round++) {
      const body = new Uint8Array(Math.floor(next() * 300))
      for (let i = 0; i < body.length; i++) body[i] = Math.floor(next() * 256)
      outcomeOf(body)
    }
  })

  it('throws nothing but MalformedXML for the valid document with bytes changed, added or cut', () => {
    const next = random(2)
    const valid = text(VALID)
    for (let round = 0; round < 3000; round++) {
      const body = Array.from(valid)
      for (let edits = 1 + Math.floor(next() * 4); edits > 0; edits--) {
        const at = Math.floor(next() * body.length)
        const kind = next()
        if (kind < 0.4) body[at] = Math.floor(next() * 256)
        else if (kind < 0.7) body.splice(at, 1)
        else body.splice(at, 0, Math.floor(next() * 256))
      }
      outcomeOf(Uint8Array.from(body))
    }
  })

  it('throws nothing but MalformedXML for documents made of pieces of XML', () => {
    const next = random(3)
    for (let round = 0; round < 5000; round++) {
      let body = ''
      for (let count = Math.floor(next() * 40); count > 0; count--) {
        body += PIECES[Math.floor(next() * PIECES.length)] ?? ''
      }
      outcomeOf(text(body))
    }
  })

  it.each([
    ['a reference past the last code point', '&#x110000;'],
    ['a reference of eight hex digits', '&#xFFFFFFFF;'],
    ['a decimal reference too large', '&#99999999999;'],
    ['a reference to NUL', '&#0;'],
    ['a reference to a surrogate', '&#xDFFF;'],
    ['a reference to U+FFFE', '&#xFFFE;'],
    ['a bare ampersand', 'a & b'],
    ['an unterminated reference', '&amp'],
    ['an entity of its own', '&xxe;'],
  ])('refuses %s', (_what, reference) => {
    const body = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${reference}</ETag></Part></CompleteMultipartUpload>`
    expect(outcomeOf(text(body))).toBe('MalformedXML')
  })

  it.each([
    ['nested 100,000 levels deep', '<a>'.repeat(100_000) + '</a>'.repeat(100_000)],
    ['with 300,000 unclosed parts', `<CompleteMultipartUpload>${'<Part>'.repeat(300_000)}`],
    ['of 2 MiB in one unclosed comment', `<CompleteMultipartUpload><!--${'-'.repeat(2 << 20)}`],
    ['of 2 MiB of ampersands', `<CompleteMultipartUpload>${'&'.repeat(2 << 20)}`],
    ['of 2 MiB of attributes', `<CompleteMultipartUpload${' a="b"'.repeat(350_000)}`],
    ['with a 2 MiB name', `<${'A'.repeat(2 << 20)}>`],
    [
      'of 10,001 parts',
      `<CompleteMultipartUpload>${'<Part><PartNumber>1</PartNumber><ETag>a</ETag></Part>'.repeat(10_001)}</CompleteMultipartUpload>`,
    ],
  ])('refuses a document %s, promptly', (_what, body) => {
    expect(outcomeOf(text(body))).toBe('MalformedXML')
  })

  it('reads a document of 10,000 parts, the most S3 allows', () => {
    const parts = Array.from(
      { length: 10_000 },
      (_, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${i}"</ETag></Part>`,
    ).join('')
    const read = parseCompletedParts(
      text(`<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`),
    )
    expect(read).toHaveLength(10_000)
    expect(read.at(-1)).toEqual({ partNumber: 10_000, etag: '9999' })
  })

  it('keeps the text of an element and its children apart', () => {
    const root = readXml(text('<a>x<b>y</b>z<c/></a>'), { maxDepth: 2 })
    expect(root).toEqual({
      name: 'a',
      text: 'xz',
      children: [
        { name: 'b', text: 'y', children: [] },
        { name: 'c', text: '', children: [] },
      ],
    })
  })
})
