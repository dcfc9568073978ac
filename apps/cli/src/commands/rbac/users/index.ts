import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'users', description: 'The users seen at login, and the roles they hold' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
    rm: () => import('./rm').then((module) => module.default),
  },
})
