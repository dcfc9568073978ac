import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { count, table } from '../../../output/output'
import { common } from '../../_shared'

export default defineCommand({
  meta: {
    name: 'status',
    description:
      'How many objects that carry state are plain, and how many under each key-encryption key',
  },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const status = await context.client.encryption.status()
    context.out.result(status, () => {
      const rows = [
        ['plain', String(status.plain)],
        ...Object.entries(status.byKek)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([kek, n]) => [`${kek}${kek === status.currentKek ? ' (current)' : ''}`, String(n)]),
      ]
      const old = Object.keys(status.byKek).filter((kek) => kek !== status.currentKek)
      const advice =
        status.plain > 0
          ? `\n${count(status.plain, 'object')} still plain: cairn admin encryption encrypt-existing`
          : old.length > 0
            ? `\nObjects under ${old.join(', ')}: cairn admin encryption rewrap, then drop ${old.length === 1 ? 'that key' : 'those keys'}`
            : `\nEverything is under ${status.currentKek}.`
      return `${table(['KEY', 'OBJECTS'], rows)}${advice}`
    })
  },
})
