import { defineCommand } from 'citty'

export default defineCommand({
  meta: {
    name: 'trust-policy',
    description:
      'Which CI jobs may act on Cairn with their OIDC token, no stored secret (administrators)',
  },
  subCommands: {
    add: () => import('./add').then((module) => module.default),
    ls: () => import('./ls').then((module) => module.default),
    rm: () => import('./rm').then((module) => module.default),
  },
})
