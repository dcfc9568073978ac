import * as v from 'valibot'
import { SourceError, type MigrationSource, type SourceUnit, type SourceVersion } from '../source'
import { bodyOf, get } from './http-json'

export interface GitlabLocation {
  /** `https://gitlab.com` or a self-managed host. */
  origin: string
  /** The project's full path (`group/sub/project`). */
  project: string
  /** The states to bring; all of the project's when empty. */
  states: string[]
  token: string
}

const StatesSchema = v.object({
  data: v.object({
    project: v.nullable(
      v.object({
        terraformStates: v.object({
          nodes: v.array(
            v.object({
              name: v.string(),
              latestVersion: v.nullable(
                v.object({
                  serial: v.number(),
                  createdAt: v.optional(v.nullable(v.string())),
                  createdByUser: v.optional(v.nullable(v.object({ username: v.string() }))),
                }),
              ),
            }),
          ),
          pageInfo: v.object({ hasNextPage: v.boolean(), endCursor: v.nullable(v.string()) }),
        }),
      }),
    ),
  }),
})

type StateNode = NonNullable<
  v.InferOutput<typeof StatesSchema>['data']['project']
>['terraformStates']['nodes'][number]

const QUERY = `query($path: ID!, $after: String) {
  project(fullPath: $path) {
    terraformStates(first: 100, after: $after) {
      nodes { name latestVersion { serial createdAt createdByUser { username } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`

/**
 * GitLab-managed Terraform state. GitLab lists a project's states and each one's latest serial
 * only through GraphQL (`project.terraformStates`), and keeps no list of versions: the versions
 * are read by probing serials 1 to the latest with REST
 * (`GET /projects/:id/terraform/state/:name/versions/:serial`); a 404 is a version deleted at the
 * source, a gap. Only the latest version's time and author are known. A state's default unit is
 * `<project path>/<state name>`.
 */
export class GitlabSource implements MigrationSource {
  readonly description: string
  readonly locks = false
  readonly #location: GitlabLocation

  constructor(location: GitlabLocation) {
    this.#location = location
    this.description = `${location.origin}/${location.project}`
  }

  get #headers(): Record<string, string> {
    return { Authorization: `Bearer ${this.#location.token}` }
  }

  async *units(): AsyncGenerator<SourceUnit> {
    const { project } = this.#location
    const states: StateNode[] = []
    let after: string | null = null
    for (;;) {
      const url = new URL('/api/graphql', this.#location.origin)
      let response: Response
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { ...this.#headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: QUERY, variables: { path: project, after } }),
          signal: AbortSignal.timeout(60_000),
        })
      } catch (error) {
        throw new SourceError(`the states of ${project}: ${url.origin} cannot be reached`, {
          cause: error,
        })
      }
      if (!response.ok) {
        await response.body?.cancel()
        throw new SourceError(`the states of ${project}: ${url.href} answered ${response.status}`)
      }
      const parsed = v.safeParse(StatesSchema, await response.json().catch(() => undefined))
      if (!parsed.success) {
        throw new SourceError(
          `the states of ${project}: ${url.href} answered an unexpected document`,
        )
      }
      const found = parsed.output.data.project
      if (found === null)
        throw new SourceError(`${this.#location.origin} has no project ${project}`)
      states.push(...found.terraformStates.nodes)
      if (!found.terraformStates.pageInfo.hasNextPage) break
      after = found.terraformStates.pageInfo.endCursor
    }
    const wanted = new Set(this.#location.states)
    for (const name of wanted) {
      if (!states.some((state) => state.name === name)) {
        throw new SourceError(`${project} has no Terraform state ${name}`)
      }
    }
    const chosen = states
      .filter((state) => wanted.size === 0 || wanted.has(state.name))
      .sort((a, b) => (a.name < b.name ? -1 : 1))
    for (const state of chosen) {
      yield {
        name: `${project}/${state.name}`,
        defaultTarget: `${project}/${state.name}`,
        versions: () => this.#versions(state.name, state.latestVersion),
      }
    }
  }

  async #versions(name: string, latest: StateNode['latestVersion']): Promise<SourceVersion[]> {
    if (latest === null) return []
    const { project } = this.#location
    const base = `/api/v4/projects/${encodeURIComponent(project)}/terraform/state/${encodeURIComponent(name)}/versions/`
    const versions: SourceVersion[] = []
    for (let serial = 0; serial <= latest.serial; serial += 1) {
      const url = new URL(`${base}${serial}`, this.#location.origin)
      // A HEAD would do, but GitLab answers GET only: the first read of the body is dropped.
      const response = await get(
        url,
        this.#headers,
        `${project} state ${name} serial ${serial}`,
        [404],
      )
      await response.body?.cancel()
      if (response.status === 404) continue
      const isLatest = serial === latest.serial
      versions.push({
        id: `gitlab+${this.#location.origin}/${project}/${name}#serial=${serial}`,
        created: isLatest ? (latest.createdAt ?? null) : null,
        author: isLatest ? (latest.createdByUser?.username ?? null) : null,
        size: null,
        md5: null,
        serial,
        open: async () =>
          bodyOf(await get(url, this.#headers, `${project} state ${name} serial ${serial}`)),
      })
    }
    return versions
  }
}
