import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'webhooks', description: 'The webhooks subscribed (administrators)' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
  },
})
