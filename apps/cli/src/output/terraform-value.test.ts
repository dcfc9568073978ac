import { describe, expect, it } from 'vitest'
import { terraformValue } from './terraform-value'

describe('terraformValue', () => {
  it.each([
    ['vpc-123', '"vpc-123"'],
    [42, '42'],
    [true, 'true'],
    [null, 'null'],
    [[], '[]'],
    [{}, '{}'],
    ['say "hi"\n', '"say \\"hi\\"\\n"'],
  ])('shows %j as %s', (value, shown) => {
    expect(terraformValue(value)).toBe(shown)
  })

  it('shows lists and maps over several lines, nested ones indented further', () => {
    expect(terraformValue({ subnets: ['a', 'b'], tags: { Name: 'x' } })).toBe(
      [
        '{',
        '  "subnets" = [',
        '    "a",',
        '    "b",',
        '  ]',
        '  "tags" = {',
        '    "Name" = "x"',
        '  }',
        '}',
      ].join('\n'),
    )
  })
})
