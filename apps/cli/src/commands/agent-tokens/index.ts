import { defineCommand } from 'citty'

export default defineCommand({
  meta: {
    name: 'agent-tokens',
    description: "The agents' tokens: create, list, revoke (administrators)",
  },
  subCommands: {
    create: () => import('./create').then((module) => module.default),
    ls: () => import('./ls').then((module) => module.default),
    rm: () => import('./rm').then((module) => module.default),
  },
})
