import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'freezes', description: 'The freezes in force (administrators)' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
  },
})
