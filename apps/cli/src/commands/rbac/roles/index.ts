import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'roles', description: 'Roles: named sets of permissions, built-in or your own' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
    show: () => import('./show').then((module) => module.default),
    create: () => import('./create').then((module) => module.default),
    delete: () => import('./delete').then((module) => module.default),
  },
})
