import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'assignments', description: 'Who holds which role where' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
  },
})
