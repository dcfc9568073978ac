import { describe, expect, it } from 'vitest'
import { parseCredential } from './credential-scope'

describe('parseCredential', () => {
  it('reads the access key and the scope', () => {
    expect(parseCredential('AKIDEXAMPLE/20150830/us-east-1/service/aws4_request')).toEqual({
      accessKeyId: 'AKIDEXAMPLE',
      scope: { date: '20150830', region: 'us-east-1', service: 'service' },
    })
  })

  it.each([
    'AKID/20150830/us-east-1/s3/aws5_request',
    'AKID/2015083/us-east-1/s3/aws4_request',
    '/20150830/us-east-1/s3/aws4_request',
    'AKID/20150830/s3/aws4_request',
    'AKID/20150830//s3/aws4_request',
  ])('refuses %s', (value) => {
    expect(parseCredential(value)).toBeUndefined()
  })
})
