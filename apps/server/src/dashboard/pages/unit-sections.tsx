import type { StateOutput } from '@cairn/core'
import type { HeldLockView, Unit, UnitStatus } from '@cairn/contract'
import { Ago, DataTable, hiddenUnits, StatusDot, unitHref } from '../view/layout'

/** The longest value or type shown of an output, in characters: the page stays readable. */
const SHOWN_VALUE_CHARS = 300

/**
 * A unit's outputs as its page shows them: by name, or why there are none (no state yet, a state
 * whose outputs cannot be read, a person without `unit:outputs`).
 */
export type ShownOutputs = Record<string, StateOutput> | 'no-state' | 'unreadable' | 'forbidden'

/** The unit's lock: who holds it, for what, since when, and the way to force it open. */
export function LockPanel({
  unit,
  now,
  canManage,
  held,
}: {
  unit: Unit
  now: number
  canManage: boolean
  /** The lock as the lock listing tells it: its way in and its holder; absent when unknown. */
  held?: HeldLockView | undefined
}) {
  const lock = unit.locked ? unit.lock : null
  return (
    <section class="panel" aria-labelledby="lock">
      <h2 id="lock">Lock</h2>
      {lock === null ? (
        <p class="muted">Not locked.</p>
      ) : (
        <>
          <p>
            <span class={unit.lock_stale ? 'badge stale' : 'badge locked'}>
              {unit.lock_stale ? 'stale lock' : 'locked'}
            </span>
          </p>
          <LockFacts lock={lock} now={now} />
          {held === undefined ? null : (
            <p>
              Taken through <strong>{held.source}</strong> by{' '}
              <span class="mono">{held.holder.subject}</span>
            </p>
          )}
          {canManage ? (
            <p>
              <a
                class="button secondary"
                href={`/app/unit/unlock?id=${encodeURIComponent(unit.id)}`}
              >
                Force unlock
              </a>
            </p>
          ) : null}
        </>
      )}
    </section>
  )
}

/** What a lock says of itself. */
export function LockFacts({ lock, now }: { lock: NonNullable<Unit['lock']>; now: number }) {
  return (
    <dl class="facts">
      <dt>Held by</dt>
      <dd>{lock.Who === '' ? <span class="muted">unknown</span> : lock.Who}</dd>
      <dt>Operation</dt>
      <dd>{lock.Operation === '' ? <span class="muted">none given</span> : lock.Operation}</dd>
      {lock.Info === '' ? null : (
        <>
          <dt>Info</dt>
          <dd>{lock.Info}</dd>
        </>
      )}
      <dt>Lock ID</dt>
      <dd class="mono">{lock.ID}</dd>
      <dt>Taken</dt>
      <dd>
        <Ago iso={lock.Created} now={now} />
      </dd>
    </dl>
  )
}

/** The current version's outputs; a sensitive one shows `(sensitive)`, never its value. */
export function OutputsPanel({ outputs }: { outputs: ShownOutputs }) {
  // Nothing to say to someone who may not read them, or about a unit with no state yet.
  if (outputs === 'forbidden' || outputs === 'no-state') return null
  const entries = outputs === 'unreadable' ? [] : Object.entries(outputs)
  return (
    <section aria-labelledby="outputs">
      <h2 id="outputs">Outputs</h2>
      {outputs === 'unreadable' ? (
        <p class="muted">
          The current state's outputs cannot be read here (it is encrypted on the client or is not a
          Terraform state, they are too large, or they nest too deeply).
        </p>
      ) : entries.length === 0 ? (
        <p class="muted">The current state has no outputs.</p>
      ) : (
        <DataTable caption="Outputs of the current version" columns={['Name', 'Type', 'Value']}>
          {entries.map(([name, output]) => (
            <tr>
              <td data-label="Name" class="mono">
                {name}
              </td>
              <td data-label="Type" class="mono">
                {typeof output.type === 'string' ? output.type : compact(output.type)}
              </td>
              <td data-label="Value" class="mono">
                {output.sensitive ? <span class="muted">(sensitive)</span> : compact(output.value)}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  )
}

/** A value as compact JSON, cut to a length a table cell can hold. */
export function compact(value: unknown): string {
  const text = value === undefined ? '' : JSON.stringify(value)
  return text.length <= SHOWN_VALUE_CHARS ? text : `${text.slice(0, SHOWN_VALUE_CHARS)}…`
}

/** The unit's own status and each dependency it has, with the state of its edge. */
/** The units that read a unit, as its page lists them. */
export interface Downstream {
  /** Those the person may read, by ID, with their status (null: no state yet). */
  units: { id: string; status: UnitStatus['status'] | null }[]
  /** How many more the person may not read. */
  hidden: number
  /** More were left out to keep the page short. */
  truncated: boolean
}

export function DependenciesPanel({
  id,
  status,
  now,
  downstream,
}: {
  id: string
  status: UnitStatus
  now: number
  downstream: Downstream
}) {
  return (
    <section aria-labelledby="dependencies">
      <h2 id="dependencies">Dependencies</h2>
      <p>
        Status: <StatusDot status={status.status} />{' '}
        <a href={`/app/unit/graph?${new URLSearchParams({ id }).toString()}`}>Dependency graph</a>
      </p>
      {status.red_upstream.length === 0 && status.red_upstream_hidden === undefined ? null : (
        <p>
          Red upstream:{' '}
          {status.red_upstream.map((upstream) => (
            <>
              <a href={unitHref(upstream)}>{upstream}</a>{' '}
            </>
          ))}
          {hiddenUnits(status.red_upstream.length, status.red_upstream_hidden).trim()}
        </p>
      )}
      {status.edges.length === 0 ? (
        <p class="muted">This unit depends on no other unit.</p>
      ) : (
        <DataTable
          caption="Units this unit depends on"
          columns={['Upstream', 'Output', 'Edge', 'Pending since']}
        >
          {status.edges.map((edge) => (
            <tr>
              <td data-label="Upstream">
                <a href={unitHref(edge.from)}>{edge.from}</a>
              </td>
              <td data-label="Output" class="mono">
                {edge.output ?? <span class="muted">the whole state</span>}
              </td>
              <td data-label="Edge">
                <span class={`badge ${edge.state}`}>{edge.state}</span>
                {edge.reason === 'client_encrypted' ? (
                  <span class="muted"> encrypted on the client</span>
                ) : null}
              </td>
              <td data-label="Pending since">
                {edge.since === undefined ? (
                  <span class="muted">—</span>
                ) : (
                  <>
                    <Ago iso={edge.since.timestamp} now={now} />
                    {edge.since.serial === null ? '' : ` (serial ${edge.since.serial})`}
                  </>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <h3>Used by</h3>
      {downstream.units.length === 0 && downstream.hidden === 0 ? (
        <p class="muted">No unit depends on this one.</p>
      ) : (
        <DataTable caption="Units that depend on this unit" columns={['Downstream', 'Status']}>
          {downstream.units.map((unit) => (
            <tr>
              <td data-label="Downstream">
                <a href={unitHref(unit.id)}>{unit.id}</a>
              </td>
              <td data-label="Status">
                <StatusDot status={unit.status ?? undefined} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {downstream.hidden === 0 ? null : (
        <p class="muted">
          {downstream.units.length === 0 ? '' : 'And '}
          {hiddenUnits(0, downstream.hidden)}
          {downstream.hidden === 1 ? ' depends on it.' : ' depend on it.'}
        </p>
      )}
      {downstream.truncated ? <p class="muted">Only the first ones are listed.</p> : null}
    </section>
  )
}
