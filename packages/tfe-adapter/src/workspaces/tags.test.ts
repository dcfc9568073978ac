import { describe, expect, it } from 'vitest'
import {
  bindings,
  expectWorkspaceDocument,
  setup,
  tagsRelation,
  withAppProd,
  workspaceBody,
  type Harness,
  type Resource,
} from '../../test/harness'

const ORG = '/organizations/acme/workspaces'

describe('listing workspaces', () => {
  /** Workspaces `both` (app, prod), `only-app` (app), `untagged`, and key/value ones. */
  async function tagged(): Promise<Harness> {
    const h = setup()
    await h.workspace('both', workspaceBody('both', tagsRelation('app', 'prod')))
    await h.workspace('only-app', workspaceBody('only-app', tagsRelation('app')))
    await h.workspace('untagged')
    await h.workspace(
      'env-prod',
      workspaceBody('env-prod', { 'tag-bindings': bindings(['env', 'prod']) }),
    )
    await h.workspace(
      'env-dev',
      workspaceBody('env-dev', { 'tag-bindings': bindings(['env', 'dev']) }),
    )
    await h.workspace('env-key', workspaceBody('env-key', { 'tag-bindings': bindings(['env']) }))
    return h
  }
  const names = (list: Resource[]) => list.map((workspace) => workspace.attributes.name)

  it.each([
    ['search%5Btags%5D=app%2Cprod', ['both']],
    ['search[tags]=app', ['both', 'only-app']],
    ['search[tags]=prod,app', ['both']],
    ['search[tags]=nothing', []],
    // key/value tags, with the redundant search[tags] and the junk parameter go-tfe sends too
    [
      'filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod&search%5Btags%5D=env&TagBindings=%7B+env+prod%7D',
      ['env-prod'],
    ],
    ['filter[tagged][0][key]=env&filter[tagged][0][value]=dev&search[tags]=env', ['env-dev']],
    ['filter[tagged][0][key]=env&search[tags]=env', ['env-key']],
  ])('lists with %s only the workspaces carrying every tag asked for', async (query, expected) => {
    const h = await tagged()
    const answer = await h.api('GET', `${ORG}?${query}`)
    expect(answer.status).toBe(200)
    expect(names(answer.many()).sort()).toEqual(expected)
    for (const workspace of answer.many()) {
      expectWorkspaceDocument(workspace, String(workspace.attributes.name))
    }
    expect(answer.doc().meta?.pagination).toMatchObject({
      'current-page': 1,
      'total-pages': 1,
      'next-page': null,
      'total-count': expected.length,
    })
  })

  it('lists with search[name] the workspaces whose names contain it', async () => {
    const h = await tagged()
    const answer = await h.api('GET', `${ORG}?search%5Bname%5D=env-`)
    expect(names(answer.many()).sort()).toEqual(['env-dev', 'env-key', 'env-prod'])
  })

  it('pages with page[size] and page[number], and says where the next page is', async () => {
    const h = await tagged()
    const pages = await Promise.all(
      [1, 2, 3].map((page) => h.api('GET', `${ORG}?page%5Bsize%5D=4&page%5Bnumber%5D=${page}`)),
    )
    const [first, second, third] = pages.map((page) => page.doc())
    expect(first?.meta?.pagination).toMatchObject({
      'current-page': 1,
      'next-page': 2,
      'total-pages': 2,
      'total-count': 6,
    })
    expect(second?.meta?.pagination).toMatchObject({ 'current-page': 2, 'next-page': null })
    expect(pages[0]?.many()).toHaveLength(4)
    expect(pages[1]?.many()).toHaveLength(2)
    expect(third?.data).toEqual([])
    const all = [...(pages[0]?.many() ?? []), ...(pages[1]?.many() ?? [])]
    expect(new Set(names(all)).size).toBe(6)
  })
})

describe('tags and tag bindings', () => {
  it('lists the tag bindings of a workspace as tag-bindings resources', async () => {
    const h = await withAppProd()
    const answer = await h.api('GET', '/workspaces/ws-app-prod/tag-bindings')
    expect(answer.status).toBe(200)
    expect(answer.many()).toEqual([
      {
        id: expect.any(String) as string,
        type: 'tag-bindings',
        attributes: { key: 'app', value: '' },
      },
    ])
  })

  it('adds a key-only binding on PATCH, as Terraform does after a create', async () => {
    const h = setup()
    await h.workspace(
      'app-prod',
      workspaceBody('app-prod', { 'tag-bindings': bindings(['env', 'prod']) }),
    )
    const answer = await h.api('PATCH', '/workspaces/ws-app-prod/tag-bindings', {
      body: bindings(['app']),
    })
    expect(answer.status).toBe(200)
    expect(answer.many().every((binding) => binding.type === 'tag-bindings')).toBe(true)
    expect(answer.many().map((binding) => binding.attributes)).toEqual([
      { key: 'env', value: 'prod' },
      { key: 'app', value: '' },
    ])
    expect((await h.unit('app-prod')).tags).toEqual(['env:prod', 'app'])
  })

  it('replaces the binding of a key that exists on PATCH', async () => {
    const h = setup()
    await h.workspace(
      'app-prod',
      workspaceBody('app-prod', { 'tag-bindings': bindings(['env', 'prod'], ['app']) }),
    )
    const answer = await h.api('PATCH', '/workspaces/ws-app-prod/tag-bindings', {
      body: bindings(['env', 'staging']),
    })
    expect(answer.status).toBe(200)
    expect((await h.unit('app-prod')).tags).toEqual(['app', 'env:staging'])
  })

  it('adds tags with POST relationships/tags and removes them with DELETE', async () => {
    const h = await withAppProd()
    const tagBody = (...names: string[]) => tagsRelation(...names).tags
    const added = await h.api('POST', '/workspaces/ws-app-prod/relationships/tags', {
      body: tagBody('prod', 'app'),
    })
    expect(added.status).toBeLessThan(300)
    expect((await h.unit('app-prod')).tags).toEqual(['app', 'prod'])
    const removed = await h.api('DELETE', '/workspaces/ws-app-prod/relationships/tags', {
      body: tagBody('app'),
    })
    expect(removed.status).toBeLessThan(300)
    expect((await h.unit('app-prod')).tags).toEqual(['prod'])
    const read = await h.api('GET', '/workspaces/ws-app-prod')
    expect(read.one().attributes['tag-names']).toEqual(['prod'])
  })
})
