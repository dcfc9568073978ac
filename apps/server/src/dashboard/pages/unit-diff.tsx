import { collectDiff } from '@cairn/state-index'
import { ClientEncryptedError, NotIndexedError } from '@cairn/core'
import type {
  AttributeChange,
  OutputChange,
  Resource,
  ResourceChange,
  UnitDiff,
  Version,
} from '@cairn/contract'
import { Hono } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { requestSignal } from '../../http/request-signal'
import { queryOf, viewerOf, type DashboardDeps } from '../context'
import { Ago, Page, unitHref } from '../view/layout'
import { unitIdOf } from './unit-query'
import { compact } from './unit-sections'

type Action = 'add' | 'remove' | 'change'

/** How each kind of change is marked: a sign and a word (never by colour alone), and a class. */
const MARK: Record<Action, { sign: string; word: string; class: string }> = {
  add: { sign: '+', word: 'added', class: 'diff-add' },
  remove: { sign: '-', word: 'removed', class: 'diff-remove' },
  change: { sign: '~', word: 'changed', class: 'diff-change' },
}

/**
 * How many changed instances one page shows: a diff of a large state is read a page at a time,
 * as the API pages it, and with the attributes of each (at most `MAX_DETAIL_INSTANCES`).
 */
const PAGE = 200

/**
 * What changed between two versions of a unit, as `cairn unit diff` prints it: resources by
 * address, then outputs, then counts; with `detail=1` the attributes that changed. A page at a
 * time (`cursor`), in a slot of the server's heavy reads.
 */
export function unitDiffRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/unit/diff', deps.heavyRead, async (c) => {
    const id = unitIdOf(c)
    const from = queryOf(c, 'from')
    const to = queryOf(c, 'to')
    const cursor = queryOf(c, 'cursor')
    const detail = queryOf(c, 'detail') === '1'
    const viewer = viewerOf(c, deps.mode)
    const back = (
      <p>
        <a href={unitHref(id)}>Back to {id}</a>
      </p>
    )
    let diff: UnitDiff
    try {
      diff = await collectDiff(
        await deps.resources.diff(c.var.principal, id, {
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
          ...(cursor === undefined ? {} : { cursor }),
          detail,
          limit: PAGE,
          signal: requestSignal(c),
        }),
      )
    } catch (error) {
      if (!(error instanceof NotIndexedError || error instanceof ClientEncryptedError)) throw error
      return c.html(
        <Page title={`Changes of ${id}`} section="units" viewer={viewer}>
          <h1>Changes of {id}</h1>
          <p>
            {error instanceof ClientEncryptedError
              ? `These versions cannot be compared: OpenTofu encrypted the version of ${error.version} on the client, so Cairn can read only its serial and lineage.`
              : `These versions cannot be compared: the version of ${error.version} is not a Terraform state that Cairn could read (an encrypted state, or one written in another format), so it has no list of resources.`}
          </p>
          {back}
        </Page>,
        422,
      )
    }
    const query = { id, from: diff.from?.timestamp ?? '', to: diff.to.timestamp }
    const toggle = new URLSearchParams(detail ? query : { ...query, detail: '1' })
    const here = detail ? { ...query, detail: '1' } : query
    const next = diff.next_cursor ?? undefined
    return c.html(
      <Page title={`Changes of ${id}`} section="units" viewer={viewer}>
        <h1>Changes of {id}</h1>
        <dl class="facts">
          <dt>From</dt>
          <dd>
            <VersionLine version={diff.from} now={deps.clock.now()} />
          </dd>
          <dt>To</dt>
          <dd>
            <VersionLine version={diff.to} now={deps.clock.now()} />
          </dd>
        </dl>
        <p>
          <a href={`/app/unit/diff?${toggle.toString()}`}>
            {detail ? 'Hide the attributes that changed' : 'Show the attributes that changed'}
          </a>
        </p>
        {diff.truncated ? (
          <p class="notice error" role="status">
            A version has more instances than its index keeps: those past its limit are not
            compared.
          </p>
        ) : null}
        <Changes diff={diff} detail={detail} />
        {cursor === undefined && next === undefined ? null : (
          <nav class="pager" aria-label="Pages">
            <a href={`/app/unit/diff?${new URLSearchParams(here).toString()}`}>First page</a>
            {next === undefined ? null : (
              <a
                href={`/app/unit/diff?${new URLSearchParams({ ...here, cursor: next }).toString()}`}
                rel="next"
              >
                Next page
              </a>
            )}
          </nav>
        )}
        {back}
      </Page>,
    )
  })
  return app
}

function VersionLine({ version, now }: { version: Version | null; now: number }) {
  if (version === null) return <span class="muted">nothing (the first version)</span>
  return (
    <>
      <Ago iso={version.timestamp} now={now} /> <span class="mono">{version.timestamp}</span>
      {version.serial === null ? '' : `, serial ${version.serial}`}, by {version.author}
    </>
  )
}

function Changes({ diff, detail }: { diff: UnitDiff; detail: boolean }) {
  const resources: [Action, Resource | ResourceChange][] = [
    ...diff.resources.added.map((item): [Action, Resource] => ['add', item]),
    ...diff.resources.removed.map((item): [Action, Resource] => ['remove', item]),
    ...diff.resources.changed.map((item): [Action, ResourceChange] => ['change', item]),
  ]
  resources.sort(([, a], [, b]) => byText(a.address, b.address))
  const outputs: [Action, OutputChange][] = [
    ...diff.outputs.added.map((item): [Action, OutputChange] => ['add', item]),
    ...diff.outputs.removed.map((item): [Action, OutputChange] => ['remove', item]),
    ...diff.outputs.changed.map((item): [Action, OutputChange] => ['change', item]),
  ]
  outputs.sort(([, a], [, b]) => byText(a.name, b.name))
  // The whole diff's counts, whichever page this is.
  const counts = diff.counts ?? {
    added: diff.resources.added.length,
    removed: diff.resources.removed.length,
    changed: diff.resources.changed.length,
  }
  const shown = resources.length
  const all = counts.added + counts.removed + counts.changed
  return (
    <>
      <p>
        <strong>
          {counts.added} to add, {counts.changed} to change, {counts.removed} to destroy; outputs:{' '}
          {outputs.length} changed.
        </strong>
        {shown < all ? ` This page shows ${shown} of the ${all} resources that changed.` : ''}
      </p>
      <h2>Resources</h2>
      {resources.length === 0 ? (
        <p class="muted">No resource changed.</p>
      ) : (
        <ul class="diff">
          {resources.map(([action, resource]) => (
            <li class={MARK[action].class}>
              <Mark action={action} /> <span class="mono">{resource.address}</span>
              {detail && 'attributes' in resource && resource.attributes !== undefined ? (
                <ul>
                  {resource.attributes.map((change) => (
                    <AttributeLine change={change} />
                  ))}
                </ul>
              ) : null}
              {detail && 'detail_omitted' in resource && resource.detail_omitted !== undefined ? (
                <p class="muted">Attributes not compared: {resource.detail_omitted}</p>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <h2>Outputs</h2>
      {outputs.length === 0 ? (
        <p class="muted">No output changed.</p>
      ) : (
        <ul class="diff">
          {outputs.map(([action, output]) => (
            <li class={MARK[action].class}>
              <Mark action={action} /> <span class="mono">{output.name}</span>
              {detail ? <Values change={output} sensitive={output.sensitive} /> : null}
            </li>
          ))}
        </ul>
      )}
    </>
  )
}

/** The sign of a change, and its word for those who do not see the sign's colour or shape. */
function Mark({ action }: { action: Action }) {
  return (
    <>
      <span class="mono" aria-hidden="true">
        {MARK[action].sign}
      </span>
      <span class="skip">{MARK[action].word}</span>
    </>
  )
}

function AttributeLine({ change }: { change: AttributeChange }) {
  const had = change.before !== undefined
  const has = change.after !== undefined
  const action: Action = had && has ? 'change' : has ? 'add' : 'remove'
  return (
    <li class={MARK[action].class}>
      <Mark action={action} /> <span class="mono">{change.path}</span>
      {/* The API marks a hidden attribute with the text `(sensitive)`, shown bare. */}
      <Values change={change} sensitive />
    </li>
  )
}

/** `: before -> after`, or the one value a new or gone entry has; nothing when it has none. */
function Values({
  change,
  sensitive,
}: {
  change: { before?: unknown; after?: unknown }
  sensitive: boolean
}) {
  const had = change.before !== undefined
  const has = change.after !== undefined
  if (!had && !has) return null
  const show = (value: unknown) =>
    sensitive && value === '(sensitive)' ? '(sensitive)' : compact(value)
  const text =
    had && has
      ? `${show(change.before)} → ${show(change.after)}`
      : show(has ? change.after : change.before)
  return <span class="mono">: {text}</span>
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
