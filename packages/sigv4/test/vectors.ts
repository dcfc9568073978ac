/**
 * The AWS SigV4 test suite (aws-sig-v4-test-suite, published with the AWS General Reference's
 * "Signature Version 4 test suite"), as carried by botocore under tests/unit/auth/aws4_testsuite
 * (commit 0e6e2404b85dc336dd2889814e089bde7d1a4c55): each request as its `.req` file gives it, and the Authorization header of its
 * `.authz` file. Credentials AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, region
 * us-east-1, service `service`, signed at 20150830T123600Z.
 *
 * Two requests differ from their `.req`: post-sts-header-after is the `.sreq` (the token added
 * after signing, so present but unsigned), and get-vanilla-with-session-token carries the token its
 * `.creq` signs, which its `.req` leaves out.
 */
export interface Vector {
  name: string
  /** The request line, the header lines, then an empty line and the body if any. */
  lines: string[]
  authorization: string
}

export const VECTOR_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
}
export const VECTOR_DATE = Date.UTC(2015, 7, 30, 12, 36)

export const VECTORS: Vector[] = [
  {
    name: 'get-header-key-duplicate',
    lines: [
      'GET / HTTP/1.1',
      'Host:example.amazonaws.com',
      'My-Header1:value2',
      'My-Header1:value2',
      'My-Header1:value1',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea',
  },
  {
    name: 'get-header-value-multiline',
    lines: [
      'GET / HTTP/1.1',
      'Host:example.amazonaws.com',
      'My-Header1:value1',
      '  value2',
      '     value3',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=cfd34249e4b1c8d6b91ef74165d41a32e5fab3306300901bb65a51a73575eefd',
  },
  {
    name: 'get-header-value-order',
    lines: [
      'GET / HTTP/1.1',
      'Host:example.amazonaws.com',
      'My-Header1:value4',
      'My-Header1:value1',
      'My-Header1:value3',
      'My-Header1:value2',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01',
  },
  {
    name: 'get-header-value-trim',
    lines: [
      'GET / HTTP/1.1',
      'Host:example.amazonaws.com',
      'My-Header1: value1',
      'My-Header2: "a   b   c"',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;my-header2;x-amz-date, Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736',
  },
  {
    name: 'get-unreserved',
    lines: [
      'GET /-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f',
  },
  {
    name: 'get-utf8',
    lines: ['GET /ሴ HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85',
  },
  {
    name: 'get-vanilla-empty-query-key',
    lines: [
      'GET /?Param1=value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb',
  },
  {
    name: 'get-vanilla-query-order-encoded',
    lines: [
      'GET /?Param-3=Value3&Param=Value2&%E1%88%B4=Value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac',
  },
  {
    name: 'get-vanilla-query-order-key-case',
    lines: [
      'GET /?Param2=value2&Param1=value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
  },
  {
    name: 'get-vanilla-query-order-key',
    lines: [
      'GET /?Param1=value2&Param1=Value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1',
  },
  {
    name: 'get-vanilla-query-order-value',
    lines: [
      'GET /?Param1=value2&Param1=value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694',
  },
  {
    name: 'get-vanilla-query-unreserved',
    lines: [
      'GET /?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197',
  },
  {
    name: 'get-vanilla-query',
    lines: ['GET / HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-vanilla-utf8-query',
    lines: ['GET /?ሴ=bar HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04',
  },
  {
    name: 'get-vanilla-with-session-token',
    lines: [
      'GET / HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
      'X-Amz-Security-Token:6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8',
  },
  {
    name: 'get-vanilla',
    lines: ['GET / HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-relative-relative',
    lines: [
      'GET /example1/example2/../.. HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-relative',
    lines: [
      'GET /example/.. HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-slash-dot-slash',
    lines: ['GET /./ HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-slash-pointless-dot',
    lines: ['GET /./example HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5',
  },
  {
    name: 'get-slash',
    lines: ['GET // HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-slashes',
    lines: [
      'GET //example// HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84',
  },
  {
    name: 'get-space',
    lines: [
      'GET /example space/ HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741',
  },
  {
    name: 'get-special-character',
    lines: [
      'GET /example/$delete HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=a853c9b21b528b19643d00910d35b83a10c366a10833ceefb45edd6c80e40f27',
  },
  {
    name: 'post-header-key-case',
    lines: ['POST / HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'post-header-key-sort',
    lines: [
      'POST / HTTP/1.1',
      'Host:example.amazonaws.com',
      'My-Header1:value1',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c',
  },
  {
    name: 'post-header-value-case',
    lines: [
      'POST / HTTP/1.1',
      'Host:example.amazonaws.com',
      'My-Header1:VALUE1',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;my-header1;x-amz-date, Signature=cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d',
  },
  {
    name: 'post-sts-header-after',
    lines: [
      'POST / HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
      'X-Amz-Security-Token:AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'post-sts-header-before',
    lines: [
      'POST / HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
      'X-Amz-Security-Token:AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead',
  },
  {
    name: 'post-vanilla-empty-query-value',
    lines: [
      'POST /?Param1=value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11',
  },
  {
    name: 'post-vanilla-query',
    lines: [
      'POST /?Param1=value1 HTTP/1.1',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11',
  },
  {
    name: 'post-vanilla',
    lines: ['POST / HTTP/1.1', 'Host:example.amazonaws.com', 'X-Amz-Date:20150830T123600Z'],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'post-x-www-form-urlencoded-parameters',
    lines: [
      'POST / HTTP/1.1',
      'Content-Type:application/x-www-form-urlencoded; charset=utf8',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
      '',
      'Param1=value1',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe',
  },
  {
    name: 'post-x-www-form-urlencoded',
    lines: [
      'POST / HTTP/1.1',
      'Content-Type:application/x-www-form-urlencoded',
      'Host:example.amazonaws.com',
      'X-Amz-Date:20150830T123600Z',
      '',
      'Param1=value1',
    ],
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
  },
]
