import type { Child } from 'hono/jsx'
import { ICON_ASSET, SCRIPT, STYLE } from './assets'

/** The main sections, in the order of the navigation. */
export const SECTIONS = [
  { key: 'units', label: 'Units', href: '/app/units' },
  { key: 'status', label: 'Status', href: '/app/status' },
  { key: 'locks', label: 'Locks', href: '/app/locks' },
  { key: 'search', label: 'Search', href: '/app/search' },
  { key: 'tokens', label: 'Tokens', href: '/app/settings/tokens' },
] as const

/** The administrators' sections, shown only to them, after the others. */
export const ADMIN_SECTIONS = [
  { key: 'audit', label: 'Audit', href: '/app/audit' },
  { key: 'freezes', label: 'Freezes', href: '/app/admin/freezes' },
  { key: 'webhooks', label: 'Webhooks', href: '/app/admin/webhooks' },
  { key: 'access', label: 'Access', href: '/app/admin/access' },
] as const
export type Section = (typeof SECTIONS)[number]['key'] | (typeof ADMIN_SECTIONS)[number]['key']

/** Who is signed in, as the page header shows it; undefined on the sign-in page. */
export interface Viewer {
  /** The subject, or the email when the token names one. */
  name: string
  /** The form token every state-changing form carries. */
  csrf: string
  /** Whether there is a session to end (not when authentication is disabled). */
  canSignOut: boolean
  /** Whether they administer the server: the navigation shows the administrators' pages. */
  administrator: boolean
}

export interface PageProps {
  title: string
  section?: Section | undefined
  viewer?: Viewer | undefined
  children?: Child
  /** Reload the page after this many seconds (a run's page while the run goes on). */
  refreshSeconds?: number | undefined
}

/** The frame of every page: a skip link, the navigation, who is signed in, the content. */
export function Page({ title, section, viewer, children, refreshSeconds }: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        {refreshSeconds === undefined ? null : (
          <meta http-equiv="refresh" content={String(refreshSeconds)} />
        )}
        <title>{`${title} · Cairn`}</title>
        <link rel="icon" href={ICON_ASSET.path} type="image/svg+xml" />
        <link rel="stylesheet" href={STYLE.path} />
        <script src={SCRIPT.path} defer></script>
      </head>
      <body>
        <a class="skip" href="#content">
          Skip to the content
        </a>
        <header class="top">
          <a class="brand" href="/app/units">
            Cairn
          </a>
          {viewer === undefined ? null : (
            <nav aria-label="Sections">
              {SECTIONS.map((item) => (
                <a href={item.href} aria-current={item.key === section ? 'page' : undefined}>
                  {item.label}
                </a>
              ))}
            </nav>
          )}
          {viewer?.administrator === true ? (
            <nav aria-label="Administration" class="admin">
              <span class="muted">Admin</span>
              {ADMIN_SECTIONS.map((item) => (
                <a href={item.href} aria-current={item.key === section ? 'page' : undefined}>
                  {item.label}
                </a>
              ))}
            </nav>
          ) : null}
          {viewer === undefined ? null : (
            <div class="who">
              <span>
                Signed in as <strong>{viewer.name}</strong>
              </span>
              {viewer.canSignOut ? (
                <form class="inline" method="post" action="/app/logout">
                  <CsrfField csrf={viewer.csrf} />
                  <button class="secondary" type="submit">
                    Sign out
                  </button>
                </form>
              ) : null}
            </div>
          )}
        </header>
        <main id="content">{children}</main>
      </body>
    </html>
  )
}

/** The hidden field that proves a form was served by this dashboard to this session. */
/** A column of a `DataTable`: its heading, right-aligned for numbers, or read only by screen readers. */
export type Column = string | { label: string; num?: boolean; skip?: boolean }

/**
 * A table as every page draws one: scrolling sideways when wide, each row a card on a phone
 * (`stack`), its caption for screen readers. The rows are the children; `false` columns are left
 * out.
 */
export function DataTable({
  caption,
  columns,
  children,
}: {
  caption: string
  columns: (Column | false)[]
  children?: Child
}) {
  return (
    <div class="scroll">
      <table class="stack">
        <caption class="skip">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) =>
              column === false ? null : typeof column === 'string' ? (
                <th scope="col">{column}</th>
              ) : (
                <th scope="col" class={column.num === true ? 'num' : undefined}>
                  {column.skip === true ? <span class="skip">{column.label}</span> : column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}

/** A unit's tags, each a link to the units with that tag. */
export function TagLinks({ tags }: { tags: readonly string[] }) {
  return (
    <>
      {tags.map((tag) => (
        <a class="badge" href={`/app/units?${new URLSearchParams({ tags: tag }).toString()}`}>
          {tag}
        </a>
      ))}
    </>
  )
}

export function CsrfField({ csrf }: { csrf: string }) {
  return <input type="hidden" name="csrf" value={csrf} />
}

/** A message at the top of a page: what was just done, or what went wrong. */
export function Notice({ text, error }: { text: string | undefined; error?: boolean }) {
  if (text === undefined || text === '') return null
  return (
    <p
      class={error === true ? 'notice error' : 'notice'}
      role={error === true ? 'alert' : 'status'}
    >
      {text}
    </p>
  )
}

/** A unit's status, in colour and in words. */
export function StatusDot({ status }: { status: 'red' | 'yellow' | 'green' | undefined }) {
  if (status === undefined) return <span class="muted">unknown</span>
  return <span class={`status ${status}`}>{status}</span>
}

/** An ISO time, shown as how long ago, with the exact time (UTC) on hover and for readers. */
export function Ago({ iso, now }: { iso: string; now: number }) {
  return (
    <time datetime={iso} title={exact(iso)}>
      {ago(Date.parse(iso), now)}
    </time>
  )
}

/** An ISO time shown exactly (UTC, to the second), with how long ago beside it. */
export function At({ iso, now }: { iso: string; now: number }) {
  return (
    <>
      <time datetime={iso}>{exact(iso)}</time>{' '}
      <span class="muted">({ago(Date.parse(iso), now)})</span>
    </>
  )
}

/** `2026-11-30 14:05:09 UTC`: an ISO time as people read it, to the second. */
export function exact(iso: string): string {
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) return iso
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** How long ago a time was (`47 s ago`), or, a second or more ahead, how soon (`in 5 min`). */
export function ago(then: number, now: number): string {
  if (Number.isNaN(then)) return 'unknown'
  const ahead = then - now >= 1000
  const span = spanOf(Math.round(Math.abs(now - then) / 1000))
  return ahead ? `in ${span}` : `${span} ago`
}

function spanOf(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.round(minutes / 60)
  if (hours < 48) return `${hours} h`
  return `${Math.round(hours / 24)} days`
}

/** Bytes as people read them. */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`
}

/** The dashboard's link to a unit's page (IDs may hold slashes: they travel as a query). */
export function unitHref(id: string, extra: Record<string, string> = {}): string {
  return `/app/unit?${new URLSearchParams({ id, ...extra }).toString()}`
}

/**
 * The red units upstream that the viewer may not read, counted after those named: ` and 2 units
 * you may not read` (or, with none named, `2 units you may not read`).
 */
export function hiddenUnits(named: number, hidden: number | undefined): string {
  if (hidden === undefined) return ''
  const units = `${hidden} ${hidden === 1 ? 'unit' : 'units'} you may not read`
  return named === 0 ? units : ` and ${units}`
}

/**
 * A secret in the one answer that shows it: what to do with it, the secret, and a button that
 * copies it (beside `actions`, when given).
 */
export function ShownOnce(props: {
  id: string
  secret: string
  notice: Child
  copy: string
  actions?: Child
}) {
  return (
    <>
      <p class="notice" role="status">
        {props.notice}
      </p>
      <p id={props.id} class="secret">
        {props.secret}
      </p>
      <p>
        <button type="button" data-copy={props.id}>
          {props.copy}
        </button>
        {props.actions === undefined ? null : <> {props.actions}</>}
      </p>
    </>
  )
}
