import { defineCommand } from 'citty'
import type { EncryptionRewritePage } from '@cairn/sdk'
import { openContext } from '../../../context'
import { count } from '../../../output/output'
import { common } from '../../_shared'

const args = {
  ...common,
  from: {
    type: 'string',
    description: 'go on after this object (the cursor a stopped run printed)',
  },
} as const

function rewriteCommand(mode: 'encrypt-existing' | 'rewrap', description: string) {
  return defineCommand({
    meta: { name: mode, description },
    args,
    async run({ args: given }) {
      const context = await openContext(given)
      const tty = process.stderr.isTTY && !context.out.json
      // Where the run is, for the progress line and for a run that stops to say where to go on.
      const at: { examined: number; cursor: string | null } = { examined: 0, cursor: null }
      const onPage = (page: EncryptionRewritePage) => {
        at.examined += page.examined
        at.cursor = page.next_cursor
        if (tty) process.stderr.write(`\r${at.examined} objects examined\u001b[K`)
      }
      try {
        const total = await context.client.encryption.rewrite(mode, {
          ...(given.from === undefined ? {} : { cursor: given.from }),
          onPage,
        })
        if (tty) process.stderr.write('\r\u001b[K')
        context.out.result(total, () => {
          const retired =
            total.retired.length === 0
              ? ''
              : `\nNothing is left under ${total.retired.join(', ')}: the server starts without ${total.retired.length === 1 ? 'it' : 'them'}.`
          return `${mode === 'rewrap' ? 'Rewrapped' : 'Encrypted'} ${count(total.rewritten, 'object')} of ${total.examined} examined.${retired}`
        })
      } catch (error) {
        if (tty) process.stderr.write('\r\u001b[K')
        if (at.cursor !== null) context.out.note(`Stopped; go on with --from ${at.cursor}`)
        throw error
      }
    },
  })
}

export const encryptExisting = rewriteCommand(
  'encrypt-existing',
  'Encrypt, under the current key, the objects that carry state and are still plain (resumable)',
)

export const rewrap = rewriteCommand(
  'rewrap',
  'Re-encrypt under the current key what is under older ones, so they can be dropped (resumable)',
)
