import { InvalidRequestError, parsePrefix } from '@cairn/core'
import { readFile } from 'node:fs/promises'
import { visibleText, WebhookRequestSchema, type WebhookRequest } from '@cairn/sdk'
import { defineCommand } from 'citty'
import * as v from 'valibot'
import { CLIError, UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'
import { repeated } from '../unit/dependency-arg'

export default defineCommand({
  meta: {
    name: 'add',
    description:
      'Send state events on units to a URL, signed; prints the signing secret once (the ID with --secret-file)',
  },
  args: {
    url: {
      type: 'positional',
      description: 'where to POST each event: an http or https URL',
      required: true,
    },
    ...common,
    event: {
      type: 'string',
      description:
        'an event to send: unit.written, unit.locked, unit.unlocked, unit.force_unlocked, unit.restored, unit.deleted or status.changed; repeatable',
      valueHint: 'event',
      required: true,
    },
    prefix: {
      type: 'string',
      description: 'the units it covers: *, team/* or one unit ID (default *)',
    },
    'secret-file': {
      type: 'string',
      description:
        'sign with the secret in this file, 32 to 256 characters (default: the server makes one)',
    },
    description: { type: 'string', description: 'what it is for, up to 200 characters' },
  },
  async run({ args, rawArgs }) {
    const request = checked({
      url: args.url,
      events: repeated(rawArgs, 'event').flatMap((events) => events.split(',')),
      ...(args.prefix === undefined ? {} : { prefix: args.prefix }),
      ...(args['secret-file'] === undefined ? {} : { secret: await secretIn(args['secret-file']) }),
      ...(args.description === undefined ? {} : { description: args.description }),
    })
    const context = await openContext(args)
    const created = await context.client.webhooks.create(request)
    if (request.secret !== undefined) {
      // The secret is the user's own, kept in their file: never echoed. The ID is the result.
      const { secret: _secret, ...withoutSecret } = created
      context.out.result(withoutSecret, () => visibleText(created.id))
      if (!context.out.json) {
        context.out.note(
          shown`Created webhook ${created.id} for ${created.url} (${created.events.join(', ')}), signed with the secret in ${args['secret-file'] ?? ''}.`,
        )
      }
      return
    }
    context.out.result(created, () => visibleText(created.secret))
    if (!context.out.json) {
      context.out.note(
        shown`Created webhook ${created.id} for ${created.url} (${created.events.join(', ')}). Its signing secret is above: it will not be shown again.`,
      )
    }
  },
})

/** The request as the server would take it, or a usage error saying what is wrong before sending. */
function checked(request: { url: string; events: string[] } & Omit<WebhookRequest, 'events'>) {
  const result = v.safeParse(WebhookRequestSchema, request)
  if (!result.success) throw new UsageError(result.issues[0].message)
  // The server's own rule for a prefix, so `prod/` is refused here, before anything is sent.
  if (result.output.prefix !== undefined) {
    try {
      parsePrefix(result.output.prefix)
    } catch (error) {
      if (error instanceof InvalidRequestError) throw new UsageError(error.message)
      throw error
    }
  }
  return result.output
}

/** The secret in a file, without the newline an editor or `echo` leaves at its end. */
async function secretIn(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).replace(/\r?\n$/, '')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new CLIError(`cannot read --secret-file ${path} (${code})`)
  }
}
