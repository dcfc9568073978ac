import type { Page as Listing } from '@cairn/core'
import type { Version } from '@cairn/contract'
import { Ago, DataTable, size, unitHref } from '../view/layout'

export interface VersionsProps {
  id: string
  page: Listing<Version>
  /** The current version's timestamp, when this page lists it. */
  current: string | undefined
  vcursor: string | undefined
  canWrite: boolean
  now: number
}

/** A page of the unit's versions, newest first, each restorable, and a pick of two to compare. */
export function VersionsPanel({ id, page, current, vcursor, canWrite, now }: VersionsProps) {
  const versions = page.items
  return (
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      {versions.length === 0 ? (
        <p class="muted">{vcursor === undefined ? 'No state written yet.' : 'No more versions.'}</p>
      ) : (
        <DataTable
          caption="Versions, newest first"
          columns={[
            'Written',
            { label: 'Serial', num: true },
            { label: 'Size', num: true },
            'Author',
            'Source',
            'Actions',
          ]}
        >
          {versions.map((version) => (
            <tr>
              <td data-label="Written">
                <Ago iso={version.timestamp} now={now} />
                {version.timestamp === current ? <span class="badge">current</span> : null}
              </td>
              <td data-label="Serial" class="num">
                {version.serial ?? '—'}
                {version.encrypted === 'client' ? (
                  <span class="badge" title="encrypted by OpenTofu on the client">
                    client-encrypted
                  </span>
                ) : null}
              </td>
              <td data-label="Size" class="num">
                {size(version.size)}
              </td>
              <td data-label="Author">{version.author}</td>
              <td data-label="Source">
                {version.source}
                <Provenance version={version} />
              </td>
              <td data-label="Actions">
                {canWrite && version.timestamp !== current ? (
                  <a
                    href={`/app/unit/restore?${new URLSearchParams({ id, version: version.timestamp }).toString()}`}
                    aria-label={`Restore the version of ${version.timestamp}`}
                  >
                    Restore
                  </a>
                ) : null}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <nav class="pager" aria-label="Pages of versions">
        {vcursor === undefined ? null : <a href={unitHref(id)}>Newest versions</a>}
        {page.nextCursor === null ? null : (
          <a href={unitHref(id, { vcursor: page.nextCursor })} rel="next">
            Older versions
          </a>
        )}
      </nav>
      {versions.length < 2 ? null : <CompareForm id={id} versions={versions} />}
    </section>
  )
}

/** Two versions of the page to compare: by default the one before the newest, and the newest. */
function CompareForm({ id, versions }: { id: string; versions: readonly Version[] }) {
  const pick = (name: string, label: string, chosen: string | undefined) => (
    <label>
      {label}
      <select name={name}>
        {versions.map((version) => (
          <option value={version.timestamp} selected={version.timestamp === chosen}>
            {version.timestamp}
            {version.serial === null ? '' : ` (serial ${version.serial})`}
          </option>
        ))}
      </select>
    </label>
  )
  return (
    <form class="filters" method="get" action="/app/unit/diff">
      <input type="hidden" name="id" value={id} />
      {pick('from', 'From version', versions[1]?.timestamp)}
      {pick('to', 'To version', versions[0]?.timestamp)}
      <button type="submit">Compare versions</button>
    </form>
  )
}

/**
 * Where an imported version came from: the source's identity of it, and when and by whom the
 * source says it was made. Nothing for a version written here.
 */
export function Provenance({ version }: { version: Version }) {
  if (version.imported_from === undefined) return null
  const created = version.original_created ?? null
  const author = version.original_author ?? null
  return (
    <span class="provenance muted">
      from <span class="mono">{version.imported_from}</span>
      {created === null ? null : (
        <>
          , made <time datetime={created}>{created}</time>
        </>
      )}
      {author === null ? null : <> by {author}</>}
    </span>
  )
}
