import * as v from 'valibot'
import { SourceError, type MigrationSource, type SourceUnit, type SourceVersion } from '../source'
import { bodyOf, get, getJson } from './http-json'

export interface TfeLocation {
  /** `https://app.terraform.io`, a TFE host, an OTF or Cairn server. */
  origin: string
  organization: string
  /** The workspaces to bring; all of the organization's when empty. */
  workspaces: string[]
  token: string
}

const PAGE_SIZE = 100

const PaginationSchema = v.object({
  meta: v.optional(
    v.object({
      pagination: v.optional(v.object({ 'next-page': v.optional(v.nullable(v.number())) })),
    }),
  ),
})

const WorkspacesSchema = v.object({
  data: v.array(v.object({ id: v.string(), attributes: v.object({ name: v.string() }) })),
})

const StateVersionsSchema = v.object({
  data: v.array(
    v.object({
      id: v.string(),
      attributes: v.object({
        serial: v.optional(v.nullable(v.number())),
        'created-at': v.optional(v.nullable(v.string())),
        size: v.optional(v.nullable(v.number())),
        status: v.optional(v.nullable(v.string())),
        'hosted-state-download-url': v.optional(v.nullable(v.string())),
      }),
      relationships: v.optional(
        v.object({
          'created-by': v.optional(
            v.nullable(v.object({ data: v.optional(v.nullable(v.object({ id: v.string() }))) })),
          ),
        }),
      ),
    }),
  ),
})

const DiscoverySchema = v.object({ 'tfe.v2': v.optional(v.string()) })

/**
 * HCP Terraform, Terraform Enterprise, OTF, or another Cairn: the TFE v2 API's workspaces and
 * state versions (`GET /state-versions?filter[workspace][name]=&filter[organization][name]=`, every
 * page), each version read from its `hosted-state-download-url`. The API's base is found the way
 * Terraform finds it (`/.well-known/terraform.json`, `tfe.v2`). A workspace's default unit is
 * `<org>/<workspace>` with `__` read as `/`. Holds the workspace lock on request.
 */
export class TfeSource implements MigrationSource {
  readonly description: string
  readonly locks = true
  readonly #location: TfeLocation
  #api: URL | undefined

  constructor(location: TfeLocation) {
    this.#location = location
    const one = location.workspaces.length === 1 ? `/${location.workspaces[0] ?? ''}` : ''
    this.description = `${location.origin}/${location.organization}${one}`
  }

  get #headers(): Record<string, string> {
    return {
      Authorization: `Bearer ${this.#location.token}`,
      Accept: 'application/vnd.api+json',
    }
  }

  async #base(): Promise<URL> {
    if (this.#api !== undefined) return this.#api
    const wellKnown = new URL('/.well-known/terraform.json', this.#location.origin)
    const response = await get(wellKnown, {}, 'service discovery', [404])
    let path = '/api/v2/'
    if (response.ok) {
      const found = v.safeParse(DiscoverySchema, await response.json().catch(() => ({})))
      if (found.success && found.output['tfe.v2'] !== undefined) path = found.output['tfe.v2']
    } else {
      await response.body?.cancel()
    }
    this.#api = new URL(path.endsWith('/') ? path : `${path}/`, this.#location.origin)
    return this.#api
  }

  async #pages<T>(
    path: string,
    query: Record<string, string>,
    schema: v.GenericSchema<unknown, { data: T[] }>,
    what: string,
  ): Promise<T[]> {
    const base = await this.#base()
    const items: T[] = []
    for (let page: number | null = 1; page !== null;) {
      const url = new URL(path, base)
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value)
      url.searchParams.set('page[number]', String(page))
      url.searchParams.set('page[size]', String(PAGE_SIZE))
      const body = await getJson(url, this.#headers, what)
      const parsed = v.safeParse(schema, body)
      if (!parsed.success)
        throw new SourceError(`${what}: ${url.href} answered an unexpected document`)
      items.push(...parsed.output.data)
      const next = v.safeParse(PaginationSchema, body)
      const following = next.success ? next.output.meta?.pagination?.['next-page'] : undefined
      page = following !== undefined && following !== null && following > page ? following : null
    }
    return items
  }

  async *units(): AsyncGenerator<SourceUnit> {
    const { organization } = this.#location
    const org = encodeURIComponent(organization)
    const all = await this.#pages(
      `organizations/${org}/workspaces`,
      {},
      WorkspacesSchema,
      `the workspaces of ${organization}`,
    )
    const wanted = new Set(this.#location.workspaces)
    for (const name of wanted) {
      if (!all.some((workspace) => workspace.attributes.name === name)) {
        throw new SourceError(`${organization} has no workspace ${name}`)
      }
    }
    const chosen = all
      .filter((workspace) => wanted.size === 0 || wanted.has(workspace.attributes.name))
      .sort((a, b) => (a.attributes.name < b.attributes.name ? -1 : 1))
    for (const workspace of chosen) {
      const name = workspace.attributes.name
      yield {
        name: `${organization}/${name}`,
        defaultTarget: `${organization}/${name.replaceAll('__', '/')}`,
        versions: () => this.#versions(name),
        lock: (reason) => this.#lock(workspace.id, reason),
      }
    }
  }

  async #versions(workspace: string): Promise<SourceVersion[]> {
    const { organization } = this.#location
    const listed = await this.#pages(
      'state-versions',
      {
        'filter[workspace][name]': workspace,
        'filter[organization][name]': organization,
      },
      StateVersionsSchema,
      `the state versions of ${organization}/${workspace}`,
    )
    const base = await this.#base()
    const finalized = listed.filter((each) => {
      const status = each.attributes.status
      return status === undefined || status === null || status === 'finalized'
    })
    // The API lists newest first: oldest first by time, then serial.
    finalized.sort((a, b) => {
      const at =
        Date.parse(a.attributes['created-at'] ?? '') - Date.parse(b.attributes['created-at'] ?? '')
      return (Number.isNaN(at) ? 0 : at) || (a.attributes.serial ?? 0) - (b.attributes.serial ?? 0)
    })
    return finalized.map((each) => {
      const download = each.attributes['hosted-state-download-url']
      return {
        id: `tfe+${base.origin}/${organization}/${workspace}#${each.id}`,
        created: each.attributes['created-at'] ?? null,
        author: each.relationships?.['created-by']?.data?.id ?? null,
        size: each.attributes.size ?? null,
        md5: null,
        serial: each.attributes.serial ?? null,
        open: async () => {
          if (download === undefined || download === null) {
            throw new SourceError(`state version ${each.id} of ${workspace} has no download URL`)
          }
          const url = new URL(download, base)
          // The token goes only to the API's own host, never to a storage host it names.
          const headers = url.origin === base.origin ? this.#headers : {}
          return bodyOf(await get(url, headers, `state version ${each.id} of ${workspace}`))
        },
      }
    })
  }

  async #lock(workspaceId: string, reason: string): Promise<() => Promise<void>> {
    const base = await this.#base()
    const action = async (name: 'lock' | 'unlock', body?: unknown) => {
      const url = new URL(`workspaces/${encodeURIComponent(workspaceId)}/actions/${name}`, base)
      let response: Response
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { ...this.#headers, 'Content-Type': 'application/vnd.api+json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
      } catch (error) {
        throw new SourceError(
          `cannot ${name} workspace ${workspaceId}: ${(error as Error).message}`,
        )
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '')
        throw new SourceError(
          `cannot ${name} workspace ${workspaceId}: ${url.origin} answered ${response.status}${response.status === 409 ? ' (it is locked already)' : ''}${text === '' ? '' : ''}`,
        )
      }
      await response.body?.cancel()
    }
    await action('lock', { reason })
    return () => action('unlock')
  }
}
