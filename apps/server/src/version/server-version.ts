// The server package's own version, read from its package.json when the server is built: one
// source of truth for `-version`, `GET /version` and the docs that ask for the same version on
// every instance.
import serverPackage from '../../package.json' with { type: 'json' }

/** The semantic version of this server (`0.1.0`). */
export const SERVER_VERSION: string = serverPackage.version
