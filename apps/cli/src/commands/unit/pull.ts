import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { Writable } from 'node:stream'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { bytes } from '../../output/output'
import { withProgress } from '../../output/progress'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'pull', description: "Download a unit's current state (to stdout, or --out)" },
  args: {
    ...unitArg,
    ...common,
    out: {
      type: 'string',
      alias: 'o',
      description: 'write the state to this file instead of stdout',
    },
  },
  async run({ args }) {
    const context = await openContext(args)
    const download = await context.client.units.download(args.id)
    const body = withProgress(shown`pulling ${args.id}`, download.size, download.body)
    if (args.out === undefined || args.out === '-') {
      await body.pipeTo(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, {
        preventClose: true,
      })
      return
    }
    // Written beside the target and renamed, so an interrupted pull leaves no half file.
    const partial = `${args.out}.partial`
    try {
      await body.pipeTo(
        Writable.toWeb(createWriteStream(partial, { mode: 0o600 })) as WritableStream<Uint8Array>,
      )
      await rename(partial, args.out)
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    }
    const summary = {
      id: args.id,
      file: args.out,
      size: download.size ?? null,
      sha256: download.sha256 ?? null,
      version: download.version ?? null,
    }
    if (context.out.json) context.out.result(summary, () => '')
    else context.out.note(shown`Pulled ${args.id} (${bytes(download.size ?? 0)}) to ${args.out}.`)
  },
})
