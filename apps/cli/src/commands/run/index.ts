import { defineCommand } from 'citty'

export default defineCommand({
  meta: {
    name: 'run',
    description:
      "Plan, apply and destroy on the server's agents (remote runs): start one, follow its log, confirm, cancel",
  },
  subCommands: {
    plan: () => import('./plan').then((module) => module.default),
    apply: () => import('./apply').then((module) => module.default),
    destroy: () => import('./destroy').then((module) => module.default),
    ls: () => import('./ls').then((module) => module.default),
    show: () => import('./show').then((module) => module.default),
    logs: () => import('./logs').then((module) => module.default),
    confirm: () => import('./confirm').then((module) => module.default),
    cancel: () => import('./cancel').then((module) => module.default),
  },
})
