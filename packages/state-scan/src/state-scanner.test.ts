import { describe, expect, it } from 'vitest'
import { StateScanError } from './scan-error'
import { StateScanner } from './state-scanner'

function scan(text: string, chunk = 3, index = false) {
  const scanner = new StateScanner({ index })
  const bytes = new TextEncoder().encode(text)
  for (let at = 0; at < bytes.length; at += chunk) scanner.write(bytes.subarray(at, at + chunk))
  return scanner.end()
}

const valid = [
  '{}',
  '[]',
  '0',
  '-0.5e+3',
  '1E9',
  '"x"',
  'true',
  'false',
  ' null ',
  '{"a":[1,2,{"b":"c\\n\\u00e9\\"\\\\"}],"c":{}}',
  '[[[]],[{}]]',
  '"\u00e9\u4e2d"',
  '{"a": "b", "c": ["d", "e"], "f" : "g","h":"i"}',
]
const invalid = [
  '',
  '   ',
  '{',
  '{"a"}',
  '{"a":}',
  '[1,]',
  '{"a":1,}',
  '01',
  '1.',
  '-',
  '1e',
  '1e+',
  '.5',
  '"\u0001"',
  '"a\nb"',
  'tru',
  'nul',
  '{"a":1}x',
  '[1 2]',
  '{,}',
  '"\\x"',
  '"\\u12g4"',
  "{'a':1}",
  '[1]]',
  '}',
  '{"a":"b",}',
  '["a",]',
  '{"a": }',
  '{"a":,"b":1}',
  '{"a": "b",,"c": 1}',
  '{"a"::1}',
]

describe('the state scanner', () => {
  it.each(valid)('accepts the JSON %j in chunks of any size', (text) => {
    for (const chunk of [1, 2, 5, 1000]) expect(() => scan(text, chunk)).not.toThrow()
  })

  it.each(invalid)('refuses the non-JSON %j in chunks of any size', (text) => {
    for (const chunk of [1, 2, 5, 1000]) expect(() => scan(text, chunk)).toThrow(StateScanError)
  })

  it('agrees with JSON.parse on every case', () => {
    for (const text of [...valid, ...invalid]) {
      let parses = true
      try {
        JSON.parse(text)
      } catch {
        parses = false
      }
      let scans = true
      try {
        scan(text)
      } catch {
        scans = false
      }
      expect(scans, text).toBe(parses)
    }
  })

  it('agrees with JSON.parse on thousands of small changes to a pretty-printed state', () => {
    // No Terraform header (whose fields are checked beyond JSON), but the resources the index
    // watches, which it reads as well.
    const base = JSON.stringify(
      {
        outputs: { o: { value: ['a', 1.5, true, null], type: ['list', 'dynamic'] } },
        resources: [{ mode: 'managed', type: 't', name: 'n', instances: [{ attributes: {} }] }],
        note: 'quote " backslash \\ tab \t é',
      },
      null,
      2,
    )
    const alphabet = '{}[]":, \n\t\\/0123456789-+.eEtrufalsn\u00e9x'
    let seed = 42
    const random = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0
      return seed % n
    }
    for (let round = 0; round < 3000; round += 1) {
      let text = base
      for (let edits = 1 + random(2); edits > 0; edits -= 1) {
        const at = random(text.length)
        const byte = alphabet[random(alphabet.length)] as string
        const kind = random(3)
        text =
          kind === 0
            ? text.slice(0, at) + text.slice(at + 1)
            : kind === 1
              ? text.slice(0, at) + byte + text.slice(at)
              : text.slice(0, at) + byte + text.slice(at + 1)
      }
      let parses = true
      try {
        JSON.parse(text)
      } catch {
        parses = false
      }
      for (const [chunk, index] of [
        [1, false],
        [7, true],
        [1 << 20, false],
        [1 << 20, true],
      ] as const) {
        let scans = true
        try {
          scan(text, chunk, index)
        } catch (error) {
          if (!(error instanceof StateScanError)) throw error
          scans = false
        }
        expect(scans, text).toBe(parses)
      }
    }
  })

  it('names the byte where the JSON breaks', () => {
    expect(() => scan('{"a": x}')).toThrow('at byte 6')
  })

  it('reads the Terraform header, outputs and where the serial sits', () => {
    // As Terraform 1.11 writes a state: pretty-printed, outputs first.
    const text = `${JSON.stringify(
      {
        version: 4,
        terraform_version: '1.11.4',
        serial: 42,
        lineage: 'line',
        outputs: { greeting: { value: 'hello', type: 'string' } },
        resources: [],
        check_results: null,
      },
      null,
      2,
    )}\n`
    for (const chunk of [1, 7, 100_000]) {
      const result = scan(text, chunk)
      expect(result.terraform).toEqual({
        version: 4,
        serial: 42,
        lineage: 'line',
        terraformVersion: '1.11.4',
      })
      expect(JSON.parse(new TextDecoder().decode(result.outputs))).toEqual({
        greeting: { value: 'hello', type: 'string' },
      })
      const span = result.serialSpan ?? { start: 0, end: 0 }
      expect(text.slice(span.start, span.end)).toBe('42')
    }
  })

  it('does not take nested fields for the header', () => {
    expect(scan('{"x":{"version":4,"serial":1,"lineage":"l"}}').terraform).toBeUndefined()
    expect(scan('[{"version":4,"serial":1,"lineage":"l"}]').terraform).toBeUndefined()
  })

  it('treats JSON without all three header fields as other JSON', () => {
    expect(scan('{"serial":1,"lineage":"l","encrypted_data":"x"}').terraform).toBeUndefined()
    expect(scan('{"serial":1,"lineage":"l","encrypted_data":"x"}').clientEncrypted).toBeUndefined()
  })

  it('reads the plain serial and lineage of a state OpenTofu encrypted on the client', () => {
    // The shape of opentofu's internal/encryption (statedata over basedata).
    const sealed = scan(
      '{"serial":7,"lineage":"l-1","meta":{"key_provider.pbkdf2.k":"e30="},"encrypted_data":"AAEC","encryption_version":"v0"}',
    )
    expect(sealed.terraform).toBeUndefined()
    expect(sealed.serialSpan).toBeUndefined()
    expect(sealed.clientEncrypted).toEqual({ encryptionVersion: 'v0', serial: 7, lineage: 'l-1' })
    expect(scan('{"encryption_version":"v0","encrypted_data":"AAEC"}').clientEncrypted).toEqual({
      encryptionVersion: 'v0',
    })
    expect(() => scan('{"serial":-1,"encrypted_data":"x","encryption_version":"v0"}')).toThrow(
      '"serial" must be a whole number',
    )
    // Nested, or without the ciphertext, it is other JSON.
    expect(
      scan('{"x":{"encryption_version":"v0","encrypted_data":"x"}}').clientEncrypted,
    ).toBeUndefined()
    expect(scan('{"encryption_version":"v0"}').clientEncrypted).toBeUndefined()
  })

  it('refuses a duplicated header field', () => {
    expect(() => scan('{"version":4,"serial":1,"serial":2,"lineage":"l"}')).toThrow(
      'duplicate top-level key',
    )
  })

  it('refuses a Terraform header with the wrong types', () => {
    expect(() => scan('{"version":"4","serial":1,"lineage":"l"}')).toThrow(
      '"version" must be a number',
    )
    expect(() => scan('{"version":4,"serial":-1,"lineage":"l"}')).toThrow(
      '"serial" must be a whole number',
    )
    expect(() => scan('{"version":4,"serial":1,"lineage":""}')).toThrow(
      '"lineage" must be a non-empty string',
    )
  })

  it('keeps no outputs larger than the cap, but still validates them', () => {
    const big = `{"outputs":{"x":"${'y'.repeat(17 * 1024 * 1024)}"}}`
    const result = scan(big, 1 << 20)
    expect(result.outputs).toBeUndefined()
    expect(result.outputsTooLarge).toBe(true)
  })
})
