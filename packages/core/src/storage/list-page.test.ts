import { describe, expect, it } from 'vitest'
import { collectPage } from './list-page'

const objects = (keys: string[]) => keys.map((key) => ({ key, etag: key, size: 0 }))

describe('list pages', () => {
  it('returns at most the limit and a cursor that resumes after it', async () => {
    const keys = ['a', 'b', 'c', 'd', 'e']
    const first = await collectPage(objects(keys), { prefix: '', limit: 2 })
    expect(first.objects.map((object) => object.key)).toEqual(['a', 'b'])
    const second = await collectPage(objects(keys), {
      prefix: '',
      limit: 2,
      cursor: first.cursor ?? '',
    })
    expect(second.objects.map((object) => object.key)).toEqual(['c', 'd'])
    const third = await collectPage(objects(keys), {
      prefix: '',
      limit: 2,
      cursor: second.cursor ?? '',
    })
    expect(third.objects.map((object) => object.key)).toEqual(['e'])
    expect(third.cursor).toBeUndefined()
  })

  it('gives no cursor when the page ends exactly at the last entry', async () => {
    const page = await collectPage(objects(['a', 'b']), { prefix: '', limit: 2 })
    expect(page.cursor).toBeUndefined()
  })

  it('skips a whole common prefix when resuming after it', async () => {
    const keys = ['x!/1', 'x!/2', 'y!/1', 'z']
    const first = await collectPage(objects(keys), { prefix: '', delimiter: '!', limit: 1 })
    expect(first.prefixes).toEqual(['x!'])
    const second = await collectPage(objects(keys), {
      prefix: '',
      delimiter: '!',
      cursor: first.cursor ?? '',
    })
    expect(second.prefixes).toEqual(['y!'])
    expect(second.objects.map((object) => object.key)).toEqual(['z'])
  })
})
