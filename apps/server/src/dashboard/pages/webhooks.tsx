import { WEBHOOK_EVENTS, type Delivery, type Webhook, type WebhookCreated } from '@cairn/contract'
import { InvalidRequestError, WebhookTargetRefusedError } from '@cairn/core'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import type { AppEnv } from '../../http/app-env'
import { flashed, queryOf, viewerOf, type DashboardDeps } from '../context'
import { postedForm } from '../posted-form'
import { ConfirmPage } from '../view/confirm'
import { Ago, At, CsrfField, DataTable, Notice, Page, ShownOnce, unitHref } from '../view/layout'

export const WEBHOOKS = '/app/admin/webhooks'
const WEBHOOK = '/app/admin/webhook'

/** Deliveries shown on one page of a subscription's. */
const DELIVERIES_PAGE = 50

/** What the form gave, kept to show it again beside the reason it was refused. */
interface Draft {
  url: string
  events: string[]
  prefix: string
  description: string
}

const EMPTY: Draft = { url: '', events: ['unit.written'], prefix: '*', description: '' }

/**
 * Webhooks (administrators; docs/webhooks.md) as pages: the subscriptions, a form that makes one
 * (its signing secret shown once, in that answer only), removal after a page that asks, and each
 * subscription's deliveries with their attempts, last status and next retry. The same service as
 * `/v1/webhooks`: anyone else gets the 403 page.
 */
export function webhookRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const { webhooks } = deps

  app.get(WEBHOOKS, async (c) => c.html(await listPage(c, deps, EMPTY)))

  app.post(WEBHOOKS, async (c) => {
    const form = postedForm(c)
    const draft: Draft = {
      url: (form.get('url') ?? '').trim(),
      events: form.getAll('events'),
      prefix: (form.get('prefix') ?? '').trim(),
      description: form.get('description') ?? '',
    }
    let created: WebhookCreated
    try {
      created = await webhooks.create(c.var.principal, {
        url: draft.url,
        events: draft.events,
        prefix: draft.prefix === '' ? '*' : draft.prefix,
        ...(draft.description.trim() === '' ? {} : { description: draft.description.trim() }),
      })
    } catch (error) {
      if (error instanceof InvalidRequestError) {
        return c.html(await listPage(c, deps, draft, error.message), 400)
      }
      if (error instanceof WebhookTargetRefusedError) {
        return c.html(await listPage(c, deps, draft, error.message), 422)
      }
      throw error
    }
    // As the API's record: the URL's origin only, since its query may hold the receiver's keys.
    noteAudit(c, {
      detail: { webhook_id: created.id, url: new URL(created.url).origin, prefix: created.prefix },
    })
    // The secret is in this answer alone: never in a URL, a redirect or a cache.
    c.header('Cache-Control', 'no-store')
    return c.html(
      <Page title="Webhook created" section="webhooks" viewer={viewerOf(c, deps.mode)}>
        <h1>Webhook created</h1>
        <ShownOnce
          id="new-secret"
          secret={created.secret}
          notice={
            <>
              Copy the signing secret now: it is not shown again. The receiver checks each
              delivery’s <code>Cairn-Webhook-Signature</code> with it.
            </>
          }
          copy="Copy the secret"
          actions={
            <a class="button secondary" href={webhookHref(created.id)}>
              See its deliveries
            </a>
          }
        />
        <WebhookFacts webhook={created} now={deps.clock.now()} />
      </Page>,
      201,
    )
  })

  app.get(WEBHOOK, async (c) => {
    const id = queryOf(c, 'id') ?? ''
    const cursor = queryOf(c, 'cursor')
    const webhook = await webhooks.get(c.var.principal, id)
    const page = await webhooks.deliveries(c.var.principal, id, {
      limit: DELIVERIES_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    })
    const now = deps.clock.now()
    return c.html(
      <Page title={`Webhook ${webhook.id}`} section="webhooks" viewer={viewerOf(c, deps.mode)}>
        <h1>Webhook to {new URL(webhook.url).host}</h1>
        <WebhookFacts webhook={webhook} now={now} />
        <p>
          <a
            class="button secondary"
            href={`${WEBHOOKS}/delete?${new URLSearchParams({ id: webhook.id }).toString()}`}
          >
            Delete this webhook
          </a>
        </p>
        <section aria-labelledby="deliveries">
          <h2 id="deliveries">Deliveries</h2>
          <Deliveries deliveries={page.items} now={now} />
          <nav class="pager" aria-label="Pages">
            {cursor === undefined ? null : <a href={webhookHref(webhook.id)}>Newest</a>}
            {page.nextCursor === null ? null : (
              <a href={webhookHref(webhook.id, { cursor: page.nextCursor })}>Older deliveries</a>
            )}
          </nav>
        </section>
      </Page>,
    )
  })

  app.get(`${WEBHOOKS}/delete`, async (c) => {
    const webhook = await webhooks.get(c.var.principal, queryOf(c, 'id') ?? '')
    return c.html(
      <ConfirmPage
        title="Delete a webhook"
        heading={`Delete the webhook to ${new URL(webhook.url).host}?`}
        section="webhooks"
        viewer={viewerOf(c, deps.mode)}
        action={`${WEBHOOKS}/delete`}
        fields={{ id: webhook.id }}
        button="Delete the webhook"
        back={webhookHref(webhook.id)}
      >
        <WebhookFacts webhook={webhook} now={deps.clock.now()} />
        <p>No event is sent to it any more, and its deliveries, waiting or done, are dropped.</p>
      </ConfirmPage>,
    )
  })

  app.post(`${WEBHOOKS}/delete`, async (c) => {
    const id = postedForm(c).get('id') ?? ''
    noteAudit(c, { detail: { webhook_id: id.slice(0, 64) } })
    await webhooks.delete(c.var.principal, id)
    deps.sessions.flash(c, `Deleted webhook ${id}.`)
    return c.redirect(WEBHOOKS, 303)
  })

  return app
}

function webhookHref(id: string, extra: Record<string, string> = {}): string {
  return `${WEBHOOK}?${new URLSearchParams({ id, ...extra }).toString()}`
}

async function listPage(c: Context<AppEnv>, deps: DashboardDeps, draft: Draft, error?: string) {
  const hooks = await deps.webhooks.list(c.var.principal)
  const now = deps.clock.now()
  return (
    <Page title="Webhooks" section="webhooks" viewer={viewerOf(c, deps.mode)}>
      <h1>Webhooks</h1>
      <Notice {...flashed(c)} />
      <Notice text={error} error />
      <p class="muted">
        Each subscription gets a signed JSON <code>POST</code> for each event of the units under its
        prefix, retried with backoff until the receiver answers 2xx.
      </p>
      <section aria-labelledby="subscriptions">
        <h2 id="subscriptions">Subscriptions</h2>
        {hooks.length === 0 ? (
          <p class="muted">No webhook yet.</p>
        ) : (
          <DataTable
            caption="Webhook subscriptions, oldest first"
            columns={['URL', 'Events', 'Prefix', 'Description', 'Created']}
          >
            {hooks.map((hook) => (
              <tr>
                <td data-label="URL" class="mono">
                  <a href={webhookHref(hook.id)}>{hook.url}</a>
                </td>
                <td data-label="Events" class="mono">
                  {hook.events.map((event) => (
                    <div>{event}</div>
                  ))}
                </td>
                <td data-label="Prefix" class="mono">
                  {hook.prefix}
                </td>
                <td data-label="Description">{hook.description ?? ''}</td>
                <td data-label="Created">
                  <Ago iso={hook.created} now={now} /> by {hook.by}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
      <section aria-labelledby="create">
        <h2 id="create">Subscribe a URL</h2>
        <form method="post" action={WEBHOOKS}>
          <CsrfField csrf={c.var.session.csrf} />
          <div class="filters">
            <label>
              URL
              <input
                name="url"
                type="url"
                required
                value={draft.url}
                placeholder="https://hooks.example.com/cairn"
              />
            </label>
            <label>
              <span>
                Prefix (<code>*</code>, <code>team/*</code> or one unit)
              </span>
              <input name="prefix" value={draft.prefix} placeholder="*" />
            </label>
            <label>
              Description
              <input name="description" value={draft.description} maxlength={200} />
            </label>
          </div>
          <fieldset>
            <legend>Events</legend>
            <div class="filters">
              {WEBHOOK_EVENTS.map((event) => (
                <label class="check">
                  <input
                    type="checkbox"
                    name="events"
                    value={event}
                    checked={draft.events.includes(event)}
                  />
                  <span class="mono">{event}</span>
                </label>
              ))}
            </div>
          </fieldset>
          <p>
            <button type="submit">Create webhook</button>
          </p>
        </form>
      </section>
    </Page>
  )
}

function WebhookFacts({ webhook, now }: { webhook: Webhook; now: number }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd class="mono">{webhook.url}</dd>
      <dt>Events</dt>
      <dd class="mono">{webhook.events.join(', ')}</dd>
      <dt>Prefix</dt>
      <dd class="mono">{webhook.prefix}</dd>
      {webhook.description === undefined ? null : (
        <>
          <dt>Description</dt>
          <dd>{webhook.description}</dd>
        </>
      )}
      <dt>ID</dt>
      <dd class="mono">{webhook.id}</dd>
      <dt>Created</dt>
      <dd>
        <At iso={webhook.created} now={now} /> by {webhook.by}
      </dd>
    </dl>
  )
}

const STATE_BADGE: Record<Delivery['state'], string> = {
  delivered: 'badge ok',
  pending: 'badge locked',
  failed: 'badge pending',
}

function Deliveries({ deliveries, now }: { deliveries: Delivery[]; now: number }) {
  if (deliveries.length === 0) return <p class="muted">No delivery yet.</p>
  return (
    <DataTable
      caption="Deliveries, newest event first"
      columns={[
        'Event',
        'Unit',
        'State',
        { label: 'Attempts', num: true },
        'Last attempt',
        'Next retry',
        'Raised',
      ]}
    >
      {deliveries.map((delivery) => (
        <tr>
          <td data-label="Event" class="mono">
            {delivery.event}
          </td>
          <td data-label="Unit">
            <a class="mono" href={unitHref(delivery.unit)}>
              {delivery.unit}
            </a>
          </td>
          <td data-label="State">
            <span class={STATE_BADGE[delivery.state]}>{delivery.state}</span>
          </td>
          <td data-label="Attempts" class="num">
            {delivery.attempts}
          </td>
          <td data-label="Last attempt">
            {delivery.last_attempt === undefined ? (
              <span class="muted">none</span>
            ) : (
              <>
                <Ago iso={delivery.last_attempt} now={now} />
                {': '}
                {delivery.last_status === undefined ? '' : `HTTP ${delivery.last_status}`}
                {delivery.last_error ?? ''}
              </>
            )}
          </td>
          <td data-label="Next retry">
            {delivery.next_attempt === undefined ? (
              <span class="muted">none</span>
            ) : (
              <At iso={delivery.next_attempt} now={now} />
            )}
          </td>
          <td data-label="Raised">
            <Ago iso={delivery.created} now={now} />
          </td>
        </tr>
      ))}
    </DataTable>
  )
}
