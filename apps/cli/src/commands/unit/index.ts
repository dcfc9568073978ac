import { defineCommand } from 'citty'

export default defineCommand({
  meta: { name: 'unit', description: 'Units: the states Cairn keeps, their locks and versions' },
  subCommands: {
    ls: () => import('./ls').then((module) => module.default),
    create: () => import('./create').then((module) => module.default),
    info: () => import('./info').then((module) => module.default),
    edit: () => import('./edit').then((module) => module.default),
    rm: () => import('./rm').then((module) => module.default),
    pull: () => import('./pull').then((module) => module.default),
    push: () => import('./push').then((module) => module.default),
    lock: () => import('./lock').then((module) => module.default),
    unlock: () => import('./unlock').then((module) => module.default),
    versions: () => import('./versions').then((module) => module.default),
    restore: () => import('./restore').then((module) => module.default),
    status: () => import('./status').then((module) => module.default),
    deps: () => import('./deps').then((module) => module.default),
    outputs: () => import('./outputs').then((module) => module.default),
    show: () => import('./show').then((module) => module.default),
    diff: () => import('./diff').then((module) => module.default),
  },
})
