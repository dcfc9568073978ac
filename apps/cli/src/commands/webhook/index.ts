import { defineCommand } from 'citty'

export default defineCommand({
  meta: {
    name: 'webhook',
    description: 'Send state events to a URL: add, remove, and see deliveries (administrators)',
  },
  subCommands: {
    add: () => import('./add').then((module) => module.default),
    rm: () => import('./rm').then((module) => module.default),
    deliveries: () => import('./deliveries').then((module) => module.default),
  },
})
