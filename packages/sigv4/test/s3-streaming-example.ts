/**
 * The example of the Amazon S3 API Reference, "Signature calculations for the Authorization
 * header: Transferring payload in multiple chunks (chunked upload)": a 66560-byte object of 'a' in
 * 64 KiB chunks, each chunk signed, with the published seed and chunk signatures.
 */
const CREDENTIAL = 'Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request'

export const STREAMING_EXAMPLE = {
  lines: [
    'PUT /examplebucket/chunkObject.txt HTTP/1.1',
    'Host:s3.amazonaws.com',
    'x-amz-date:20130524T000000Z',
    'x-amz-storage-class:REDUCED_REDUNDANCY',
    `Authorization:AWS4-HMAC-SHA256 ${CREDENTIAL},SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9`,
    'x-amz-content-sha256:STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    'Content-Encoding:aws-chunked',
    'x-amz-decoded-content-length:66560',
    'Content-Length:66824',
  ],
  body: [
    `10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n${'a'.repeat(65536)}\r\n`,
    `400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n${'a'.repeat(1024)}\r\n`,
    `0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n`,
  ].join(''),
  secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  now: Date.UTC(2013, 4, 24),
}
