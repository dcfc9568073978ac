import { describe, expect, it } from 'vitest'
import { canonicalPath, canonicalRequest, uriEncode } from './canonical-request'

describe('canonicalPath for S3', () => {
  it.each([
    ['/tfstate/env%3A/dev/app/terraform.tfstate', '/tfstate/env%3A/dev/app/terraform.tfstate'],
    ['/tfstate/env:/dev/app/terraform.tfstate', '/tfstate/env%3A/dev/app/terraform.tfstate'],
    ['/test$file.text', '/test%24file.text'],
    ['/a%20b/c+d/%7Ee', '/a%20b/c%2Bd/~e'],
    ['/a%2Fb', '/a%2Fb'],
    ['/a/./b/../c//', '/a/./b/../c//'],
    ['/%e1%88%b4', '/%E1%88%B4'],
  ])('gives %s as %s', (path, canonical) => {
    expect(canonicalPath(path, false)).toBe(canonical)
  })
})

describe('canonicalPath for other services', () => {
  it.each([
    ['/example/..', '/'],
    ['//example//', '/example/'],
    ['/./example', '/example'],
    ['/example space/', '/example%20space/'],
    ['/a%20b', '/a%2520b'],
  ])('normalises and encodes %s as %s', (path, canonical) => {
    expect(canonicalPath(path, true)).toBe(canonical)
  })
})

describe('uriEncode', () => {
  it('keeps only the unreserved characters', () => {
    expect(uriEncode("-._~AZaz09 !'()*/:+=&")).toBe('-._~AZaz09%20%21%27%28%29%2A%2F%3A%2B%3D%26')
  })
})

describe('canonicalRequest', () => {
  it('signs only the listed headers, trimmed, with the query sorted and re-encoded', () => {
    const request = {
      method: 'GET',
      path: '/tfstate',
      query: 'prefix=env%3A%2F&list-type=2&max-keys=1000',
      headers: {
        host: 'cairn.example.com',
        'x-amz-date': '20261122T035158Z',
        'user-agent': '  aws-sdk-go-v2/1.36.0   os/linux ',
        'x-forwarded-for': '10.0.0.1',
      },
    }
    expect(
      canonicalRequest(request, ['x-amz-date', 'host', 'user-agent'], 'UNSIGNED-PAYLOAD', false),
    ).toBe(
      [
        'GET',
        '/tfstate',
        'list-type=2&max-keys=1000&prefix=env%3A%2F',
        'host:cairn.example.com',
        'user-agent:aws-sdk-go-v2/1.36.0 os/linux',
        'x-amz-date:20261122T035158Z',
        '',
        'host;user-agent;x-amz-date',
        'UNSIGNED-PAYLOAD',
      ].join('\n'),
    )
  })
})
