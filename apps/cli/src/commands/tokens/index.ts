import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'tokens', description: 'API tokens: for CI and for Terraform' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
    create: () => import('./create').then((module) => module.default),
    revoke: () => import('./revoke').then((module) => module.default),
  },
})
