import { join } from 'node:path'
import * as v from 'valibot'
import { configDir, readJsonFile, writePrivateJson } from './files'

/**
 * What the CLI keeps per server: an access token (or API token), after a login with a provider its
 * refresh token, and the CA file `--ca-file` named at login, for a server a private CA vouches for.
 */
export const ProfileSchema = v.object({
  access_token: v.string(),
  refresh_token: v.optional(v.string()),
  ca_file: v.optional(v.string()),
})
export type Profile = v.InferOutput<typeof ProfileSchema>

/** The file as a whole; `default` is absent from files written before it existed. */
const CredentialsSchema = v.object({
  default: v.optional(v.string()),
  profiles: v.record(v.string(), ProfileSchema),
})
type CredentialsFile = v.InferOutput<typeof CredentialsSchema>

/**
 * `~/.config/cairn/credentials.json`: `{"default"?: "<server URL>", "profiles": {"<server URL>":
 * {"access_token", "refresh_token"?, "ca_file"?}}}`, mode 0600 (DESIGN section 12, with the
 * default server and the CA file added as optional fields, so files from before still read).
 */
export class Credentials {
  readonly path: string

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.path = join(configDir(env), 'credentials.json')
  }

  async all(): Promise<Record<string, Profile>> {
    return (await this.#read()).profiles
  }

  async get(server: string): Promise<Profile | undefined> {
    return (await this.all())[server]
  }

  /** The server `cairn auth switch` (or the last `cairn login`) chose, if any. */
  async defaultServer(): Promise<string | undefined> {
    return (await this.#read()).default
  }

  /**
   * Saves a server's tokens in place of the ones it had. The CA file a login remembered is kept
   * unless `profile` names another, so a refresh or a new login never forgets it.
   */
  async set(server: string, profile: Profile): Promise<void> {
    const file = await this.#read()
    const caFile = profile.ca_file ?? file.profiles[server]?.ca_file
    file.profiles[server] = { ...profile, ...(caFile === undefined ? {} : { ca_file: caFile }) }
    await this.#write(file)
  }

  /** Makes `server` the one commands use when none is named. */
  async setDefault(server: string): Promise<void> {
    const file = await this.#read()
    await this.#write({ ...file, default: server })
  }

  /** Forgets a server (and that it was the default); true if there was something to forget. */
  async remove(server: string): Promise<boolean> {
    const file = await this.#read()
    if (!Object.hasOwn(file.profiles, server)) return false
    const profiles = Object.fromEntries(
      Object.entries(file.profiles).filter(([url]) => url !== server),
    )
    await this.#write({
      ...(file.default === undefined || file.default === server ? {} : { default: file.default }),
      profiles,
    })
    return true
  }

  async #read(): Promise<CredentialsFile> {
    const parsed = v.safeParse(CredentialsSchema, (await readJsonFile(this.path)) ?? {})
    return parsed.success ? parsed.output : { profiles: {} }
  }

  async #write(file: CredentialsFile): Promise<void> {
    await writePrivateJson(this.path, {
      ...(file.default === undefined ? {} : { default: file.default }),
      profiles: file.profiles,
    })
  }
}
