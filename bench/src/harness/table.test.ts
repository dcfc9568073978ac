import { describe, expect, it } from 'vitest'
import { renderMarkdownTable, renderTable } from './table'

const table = {
  title: 'upload',
  columns: ['figure', 'Cairn', { header: 'where', align: 'left' as const }],
  rows: [
    ['small write', '9.56', 'one'],
    ['list all units', '2,947', 'three|four'],
  ],
  notes: ['ms'],
}

describe('a report table', () => {
  it('aligns the first column left, figures right, and notes under it', () => {
    expect(renderTable(table)).toEqual([
      'upload',
      '  figure          Cairn  where',
      '  small write      9.56  one',
      '  list all units  2,947  three|four',
      '  (ms)',
    ])
  })

  it('renders as a Markdown table for a results file, pipes escaped', () => {
    expect(renderMarkdownTable(table)).toEqual([
      '**upload**',
      '',
      '| figure | Cairn | where |',
      '| --- | ---: | --- |',
      '| small write | 9.56 | one |',
      '| list all units | 2,947 | three\\|four |',
      '',
      '- ms',
    ])
  })
})
