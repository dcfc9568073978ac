import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'locks', description: 'The locks held across units, and which are stale' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
  },
})
