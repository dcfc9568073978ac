import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'admin', description: 'Look after the server itself (administrators)' },
  subCommands: {
    encryption: () => import('./encryption/index').then((module) => module.default),
    export: () => import('./export').then((module) => module.default),
  },
})
