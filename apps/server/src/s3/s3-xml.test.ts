import { describe, expect, it } from 'vitest'
import { S3Error } from './s3-errors'
import { parseCompletedParts } from './s3-completed-parts'
import { escapeXml, xmlDocument } from './s3-xml'

const bytes = (text: string) => new TextEncoder().encode(text)

/** The S3 code of what `read` throws; any other error fails the test. */
function codeOf(read: () => unknown): string {
  try {
    read()
  } catch (error) {
    if (error instanceof S3Error) return error.code
    throw error
  }
  return 'read'
}

describe('S3 XML', () => {
  it('writes a document with escaped text and repeated elements', () => {
    expect(
      xmlDocument('ListBucketResult', {
        Name: 'a&b',
        Contents: [{ Key: '<k>' }, { Key: 'j' }],
        Skipped: undefined,
        IsTruncated: false,
      }),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>a&amp;b</Name><Contents><Key>&lt;k&gt;</Key></Contents><Contents><Key>j</Key></Contents><IsTruncated>false</IsTruncated></ListBucketResult>',
    )
  })

  it.each([
    ['an escape sequence', '/s3/b/\u001b[31mred', '/s3/b/%1B[31mred'],
    ['a NUL and a bell', 'a\u0000b\u0007', 'a%00b%07'],
    ['DEL and a C1 control (CSI)', 'x\u007fy\u009bz', 'x%7Fy%C2%9Bz'],
    ['a newline and a tab', 'a\nb\tc', 'a%0Ab%09c'],
    ['a lone surrogate and U+FFFF', 'a\ud800b\uffff', 'a%EF%BF%BDb%EF%BF%BF'],
    ['letters from other scripts', 'état/é/日本/😀', 'état/é/日本/😀'],
  ])('writes %s as text a terminal shows as it is and XML parses', (_what, text, written) => {
    expect(escapeXml(text)).toBe(written)
  })

  it('reads the parts of a completion as the Go SDK writes it', () => {
    const xml =
      '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><ChecksumSHA256>abc=</ChecksumSHA256><ETag>&#34;0123abcd&#34;</ETag><PartNumber>1</PartNumber></Part><Part><ETag>"ffff"</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>'
    expect(parseCompletedParts(bytes(xml))).toEqual([
      { partNumber: 1, etag: '0123abcd' },
      { partNumber: 2, etag: 'ffff' },
    ])
  })

  it('reads a completion with a declaration, comments, whitespace and a namespace prefix', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!-- from a client -->
<s3:CompleteMultipartUpload xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/">
  <s3:Part>
    <s3:PartNumber> 7 </s3:PartNumber>
    <s3:ETag><![CDATA["abc"]]></s3:ETag>
  </s3:Part>
</s3:CompleteMultipartUpload>
`
    expect(parseCompletedParts(bytes(xml))).toEqual([{ partNumber: 7, etag: 'abc' }])
  })

  it.each([
    ['not XML at all', 'hello'],
    ['another document', '<Delete><Object><Key>a</Key></Object></Delete>'],
    ['no parts', '<CompleteMultipartUpload></CompleteMultipartUpload>'],
    [
      'a part without an ETag',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>',
    ],
    [
      'a reference past the last code point',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&#x110000;</ETag></Part></CompleteMultipartUpload>',
    ],
    [
      'a reference to NUL',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&#0;</ETag></Part></CompleteMultipartUpload>',
    ],
    [
      'a reference to a surrogate',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&#xD800;</ETag></Part></CompleteMultipartUpload>',
    ],
    [
      'an entity it does not know',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&nbsp;</ETag></Part></CompleteMultipartUpload>',
    ],
    [
      'a DOCTYPE with its own entities',
      '<!DOCTYPE x [<!ENTITY a "b">]><CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&a;</ETag></Part></CompleteMultipartUpload>',
    ],
    [
      'a part number of six digits',
      '<CompleteMultipartUpload><Part><PartNumber>100000</PartNumber><ETag>a</ETag></Part></CompleteMultipartUpload>',
    ],
    [
      'a mismatched end tag',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>a</PartNumber></Part></CompleteMultipartUpload>',
    ],
    [
      'nesting deeper than the document has',
      '<CompleteMultipartUpload><Part><ETag><x>a</x></ETag><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>',
    ],
  ])('refuses %s with MalformedXML', (_what, xml) => {
    expect(codeOf(() => parseCompletedParts(bytes(xml)))).toBe('MalformedXML')
  })
})
