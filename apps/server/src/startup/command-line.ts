import { loadConfig, type Config } from '../config/config'
import { ConfigError } from '../config/config-error'
import { SERVER_VERSION } from '../version/server-version'
import { refuse } from './refuse'

/**
 * The config to run with, from the arguments and the environment. Undefined when they asked for
 * the help or the version instead, which is then printed; a bad setting is refused in one line.
 */
export function readCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Config | undefined {
  try {
    const invocation = loadConfig(argv, env)
    if ('help' in invocation) {
      process.stdout.write(invocation.help)
      return undefined
    }
    if ('version' in invocation) {
      process.stdout.write(`cairn-server ${SERVER_VERSION}\n`)
      return undefined
    }
    return invocation.config
  } catch (error) {
    if (error instanceof ConfigError) refuse(error.message)
    throw error
  }
}
