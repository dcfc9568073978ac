import { defineCommand } from 'citty'

export default defineCommand({
  meta: {
    name: 'rbac',
    description: 'Access control: roles, who holds them on which units, and what you may do',
  },
  subCommands: {
    roles: () => import('./roles/index').then((module) => module.default),
    users: () => import('./users/index').then((module) => module.default),
    assignments: () => import('./assignments/index').then((module) => module.default),
    assign: () => import('./assign').then((module) => module.default),
    revoke: () => import('./revoke').then((module) => module.default),
    check: () => import('./check').then((module) => module.default),
  },
})
