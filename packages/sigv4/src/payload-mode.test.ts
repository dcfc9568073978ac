import { describe, expect, it } from 'vitest'
import { isStreaming, parsePayloadMode } from './payload-mode'

describe('parsePayloadMode', () => {
  it.each([
    ['UNSIGNED-PAYLOAD', { kind: 'unsigned' }],
    ['STREAMING-UNSIGNED-PAYLOAD-TRAILER', { kind: 'streaming-unsigned-trailer' }],
    ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD', { kind: 'streaming-signed' }],
    ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', { kind: 'streaming-signed-trailer' }],
    [
      'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855',
      {
        kind: 'sha256',
        hex: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      },
    ],
  ])('reads %s', (value, mode) => {
    expect(parsePayloadMode(value)).toEqual(mode)
  })

  it.each(['STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD', 'abc', ''])('refuses %j', (value) => {
    expect(() => parsePayloadMode(value)).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    )
  })

  it('tells streaming modes apart', () => {
    expect(isStreaming({ kind: 'streaming-signed' })).toBe(true)
    expect(isStreaming({ kind: 'unsigned' })).toBe(false)
  })
})
