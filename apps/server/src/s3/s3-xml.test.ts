import { describe, expect, it } from 'vitest'
import { S3Error } from './s3-errors'
import { parseCompletedParts, xmlDocument } from './s3-xml'

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

  it('reads the parts of a completion as the Go SDK writes it', () => {
    const xml =
      '<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Part><ChecksumSHA256>abc=</ChecksumSHA256><ETag>&#34;0123abcd&#34;</ETag><PartNumber>1</PartNumber></Part><Part><ETag>"ffff"</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>'
    expect(parseCompletedParts(xml)).toEqual([
      { partNumber: 1, etag: '0123abcd' },
      { partNumber: 2, etag: 'ffff' },
    ])
  })

  it.each([
    ['not XML at all', 'hello'],
    ['no parts', '<CompleteMultipartUpload></CompleteMultipartUpload>'],
    [
      'a part without an ETag',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>',
    ],
  ])('refuses %s with MalformedXML', (_what, xml) => {
    expect(() => parseCompletedParts(xml)).toThrow(S3Error)
  })
})
