import type { UnitDiff } from '@cairn/sdk'
import { describe, expect, it } from 'vitest'
import { diffText } from './unit-diff'

const version = (timestamp: string) => ({
  timestamp,
  sha256: 'a'.repeat(64),
  md5: 'b'.repeat(32),
  size: 1,
  serial: 1,
  lineage: 'l',
  author: 'ann',
  source: 'api' as const,
})

const EMPTY: UnitDiff = {
  unit: 'team/app',
  from: null,
  to: version('2026-11-23T12:00:00.000Z'),
  resources: { added: [], removed: [], changed: [] },
  outputs: { added: [], removed: [], changed: [] },
  truncated: false,
}

const plain = { colour: false, detail: true }

describe('diffText', () => {
  it('says there was no earlier version when the first one changed nothing', () => {
    expect(diffText(EMPTY, plain)).toBe(
      'No changes between (no earlier version) and 2026-11-23T12:00:00.000Z.',
    )
  })

  it('shows a sensitive output value unquoted, and a null value as null', () => {
    const diff: UnitDiff = {
      ...EMPTY,
      outputs: {
        added: [{ name: 'token', sensitive: true, after: '(sensitive)' }],
        removed: [{ name: 'old', sensitive: false, before: null }],
        changed: [],
      },
    }
    expect(diffText(diff, plain).split('\n').slice(0, 3)).toEqual([
      'Outputs:',
      '- old: null',
      '+ token: (sensitive)',
    ])
  })

  it('says why the attributes of a changed resource were not compared', () => {
    const diff: UnitDiff = {
      ...EMPTY,
      resources: {
        added: [],
        removed: [],
        changed: [
          {
            address: 'aws_lambda_function.big',
            module: '',
            mode: 'managed',
            type: 'aws_lambda_function',
            name: 'big',
            provider: 'provider["registry.terraform.io/hashicorp/aws"]',
            identity: {},
            detail_omitted: 'too large to compare',
          },
        ],
      },
    }
    expect(diffText(diff, plain).split('\n').slice(0, 2)).toEqual([
      '~ aws_lambda_function.big',
      '    (attributes not compared: too large to compare)',
    ])
  })
})
