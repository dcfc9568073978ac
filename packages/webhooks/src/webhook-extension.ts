import type {
  ExtensionHost,
  StatusChange,
  StatusWatch,
  UnitChange,
  WriteExtension,
} from '@cairn/core'
import type { Version, WebhookEvent, WebhookEventType } from '@cairn/contract'
import { eventPrincipal, type EventDraft, type EventRecorder } from './event-recorder'

const TYPES = {
  write: 'unit.written',
  restore: 'unit.restored',
  delete: 'unit.deleted',
} as const satisfies Record<UnitChange['kind'], WebhookEventType>

/**
 * The webhooks' part in the write path. When a subscription wants the change's event, the event
 * is queued as `prepared` before the commit, with the unit's current version (or, for a delete,
 * its epoch), made `ready` after it, and taken back when the change is refused or commits nothing.
 * A crash between the commit and `afterCommit` leaves the prepared entry, which the delivery worker
 * resolves from the unit record (`delivery-worker.ts`): no committed change loses its event.
 *
 * When a subscription wants `status.changed`, the statuses of the unit and of what lies
 * downstream (`StatusWatch`) are read before the commit and again after it, and each unit whose
 * colour changed gets an event. Those are queued after the commit: a crash in between loses them.
 *
 * With no subscription a change costs one HEAD of the subscriptions record.
 */
export function webhookExtension(
  recorder: EventRecorder,
  records: ExtensionHost['records'],
  watch: StatusWatch,
): WriteExtension {
  return {
    name: 'webhooks',
    async beforeCommit(change) {
      const type = TYPES[change.kind]
      const { hooks, status } = await recorder.interest(type, change.unit)
      if (hooks.length === 0 && !status) return undefined
      const principal = eventPrincipal(change.principal)
      let prepared: Awaited<ReturnType<EventRecorder['prepare']>> | undefined
      if (hooks.length > 0) {
        const record = (await records.read(change.unit))?.record
        const before =
          change.kind === 'delete' ? (record?.epoch ?? null) : (record?.current?.timestamp ?? null)
        const draft = {
          type,
          unit: change.unit,
          principal,
          ...(change.source === undefined ? {} : { source: change.source }),
        }
        prepared = await recorder.prepare(hooks, draft, { kind: change.kind, before })
      }
      const watched = status ? await watch.before(change.unit) : undefined
      return {
        async afterCommit(outcome) {
          if (prepared !== undefined) {
            if (outcome.version === null && change.kind !== 'delete') {
              // The same bytes again: nothing was committed, nothing happened.
              await recorder.withdraw(prepared)
            } else {
              await recorder.ready(
                prepared,
                outcome.version === null ? {} : { version: eventVersion(outcome.version) },
              )
            }
          }
          for (const changed of (await watched?.changes()) ?? []) {
            await recorder.record(statusEvent(changed, principal))
          }
        },
        async onAbort() {
          if (prepared !== undefined) await recorder.withdraw(prepared)
        },
      }
    },
  }
}

/** A version as an event names it. */
export function eventVersion(
  version: Pick<Version, 'timestamp' | 'serial' | 'sha256' | 'size'>,
): NonNullable<WebhookEvent['version']> {
  return {
    timestamp: version.timestamp,
    serial: version.serial,
    sha256: version.sha256,
    size: version.size,
  }
}

/** The `status.changed` event of a unit whose colour a change changed. */
function statusEvent(changed: StatusChange, principal: EventDraft['principal']): EventDraft {
  const { previous, current } = changed
  return {
    type: 'status.changed',
    unit: changed.unit,
    principal,
    status: {
      previous: previous.status,
      current: current.status,
      edges: current.edges.filter((edge) => edge.state === 'pending'),
      red_upstream: current.red_upstream,
    },
  }
}
