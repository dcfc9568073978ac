import { defineCommand } from 'citty'

export default defineCommand({
  meta: {
    name: 'encryption',
    description:
      'Encryption at rest: what is encrypted under which key, encrypt the rest, move it all to the current key',
  },
  subCommands: {
    status: () => import('./status').then((module) => module.default),
    'encrypt-existing': () => import('./rewrite').then((module) => module.encryptExisting),
    rewrap: () => import('./rewrite').then((module) => module.rewrap),
  },
})
