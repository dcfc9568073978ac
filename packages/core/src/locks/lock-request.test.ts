import { describe, expect, it } from 'vitest'
import { InvalidLockInfoError } from '../errors'
import { parseLockRequest } from './lock-request'

describe('lock info', () => {
  it("accepts Terraform's LockInfo as it sends it", () => {
    const info = {
      ID: '3334c99b-bd4d-f772-89eb-ddc8a168609e',
      Operation: 'OperationTypeApply',
      Info: '',
      Who: 'root@vm',
      Version: '1.11.4',
      Created: '2026-11-22T03:51:53.193653099Z',
      Path: '',
    }
    expect(parseLockRequest(info)).toEqual(info)
  })

  it('accepts an empty request and drops unknown fields', () => {
    expect(parseLockRequest({})).toEqual({})
    expect(parseLockRequest({ Who: 'x', extra: 1 })).toEqual({ Who: 'x' })
  })

  it.each([
    [null, 'expected a JSON object'],
    [[], 'expected a JSON object'],
    ['x', 'expected a JSON object'],
    [{ ID: 'not-a-uuid' }, 'ID: must be a UUID'],
    [{ ID: 7 }, 'ID: '],
    [{ Created: 'yesterday' }, 'Created: must be an RFC 3339 time'],
    [{ Who: 'x'.repeat(4097) }, 'Who: is longer than 4096'],
  ])('refuses %j', (input, message) => {
    expect(() => parseLockRequest(input)).toThrow(InvalidLockInfoError)
    expect(() => parseLockRequest(input)).toThrow(message)
  })

  it('strips the ANSI escapes and line breaks of a field, so they never reach a terminal', () => {
    const { Info } = parseLockRequest({ Info: '\u001b[31mred\u001b[0m\r\nforged' })
    expect(Info).toBe('[31mred[0m forged')
    for (const control of ['\u001b', '\r', '\n']) expect(Info).not.toContain(control)
  })

  it.each(['Operation', 'Info', 'Who', 'Version', 'Path'])(
    'strips C0 and C1 controls, DEL and bidirectional overrides from %s',
    (field) => {
      const hostile = 'a\u0000b\u0007c\u007fd\u0085e\u009bf\u202eg\u2066h\u2069i\tj\u0008k'
      expect(parseLockRequest({ [field]: hostile })).toEqual({ [field]: 'abcdefghi jk' })
    },
  )

  it('leaves ordinary text as it is', () => {
    const info = {
      Operation: 'OperationTypeApply',
      Info: 'Ünïcödé λ 日本語 ✓ — déploiement',
      Who: 'user@host',
      Version: '1.11.4',
      Path: 'team/app env/prod.tfstate',
    }
    expect(parseLockRequest(info)).toEqual(info)
  })

  it('takes a lock whose fields are nothing but controls, leaving them empty', () => {
    expect(parseLockRequest({ Who: '\u001b\u009b\u202e', Info: '' })).toEqual({
      Who: '',
      Info: '',
    })
  })
})
