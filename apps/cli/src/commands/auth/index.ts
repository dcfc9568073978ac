import { defineCommand } from 'citty'

/** `cairn auth`, as `gh auth`: the logins this machine keeps, and which server is the default. */
export default defineCommand({
  meta: {
    name: 'auth',
    description: 'Log in and out, see which logins work, choose the default server',
  },
  subCommands: {
    login: () => import('../login').then((module) => module.default),
    logout: () => import('../logout').then((module) => module.default),
    status: () => import('./status').then((module) => module.default),
    switch: () => import('./switch').then((module) => module.default),
    token: () => import('./token').then((module) => module.default),
  },
})
