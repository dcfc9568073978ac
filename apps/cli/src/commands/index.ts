import { defineCommand } from 'citty'

/** The command tree; each command is loaded only when it runs. */
export const root = defineCommand({
  meta: {
    name: 'cairn',
    description: 'Work with a Cairn server: log in, manage units and their state',
  },
  args: {
    version: {
      type: 'boolean',
      description: 'print the version of cairn, and of the server when one is configured',
    },
  },
  subCommands: {
    login: () => import('./login').then((module) => module.default),
    logout: () => import('./logout').then((module) => module.default),
    whoami: () => import('./whoami').then((module) => module.default),
    auth: () => import('./auth/index').then((module) => module.default),
    creds: () => import('./creds').then((module) => module.default),
    unit: () => import('./unit/index').then((module) => module.default),
    locks: () => import('./locks/index').then((module) => module.default),
    status: () => import('./status').then((module) => module.default),
    tokens: () => import('./tokens/index').then((module) => module.default),
    rbac: () => import('./rbac/index').then((module) => module.default),
    freeze: () => import('./freeze').then((module) => module.default),
    unfreeze: () => import('./unfreeze').then((module) => module.default),
    freezes: () => import('./freezes/index').then((module) => module.default),
    audit: () => import('./audit').then((module) => module.default),
    webhook: () => import('./webhook/index').then((module) => module.default),
    webhooks: () => import('./webhooks/index').then((module) => module.default),
    run: () => import('./run/index').then((module) => module.default),
    agent: () => import('./agent').then((module) => module.default),
    'agent-tokens': () => import('./agent-tokens/index').then((module) => module.default),
    import: () => import('./import').then((module) => module.default),
    export: () => import('./export').then((module) => module.default),
    search: () => import('./search').then((module) => module.default),
    reindex: () => import('./reindex').then((module) => module.default),
    admin: () => import('./admin/index').then((module) => module.default),
    'trust-policy': () => import('./trust-policy/index').then((module) => module.default),
    api: () => import('./api').then((module) => module.default),
    completion: () => import('./completion').then((module) => module.default),
    version: () => import('./version').then((module) => module.default),
  },
})
