import { join } from 'node:path'
import * as v from 'valibot'
import { configDir, readJsonFile, writePrivateJson } from './files'

/** What the CLI keeps per server: an access token (or API token) and, after a login, a refresh token. */
export const ProfileSchema = v.object({
  access_token: v.string(),
  refresh_token: v.optional(v.string()),
})
export type Profile = v.InferOutput<typeof ProfileSchema>

const CredentialsSchema = v.object({ profiles: v.record(v.string(), ProfileSchema) })

/**
 * `~/.config/cairn/credentials.json`: `{"profiles": {"<server URL>": {"access_token",
 * "refresh_token"}}}`, mode 0600 (service spec, Credential files).
 */
export class Credentials {
  readonly path: string

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.path = join(configDir(env), 'credentials.json')
  }

  async all(): Promise<Record<string, Profile>> {
    const parsed = v.safeParse(
      CredentialsSchema,
      (await readJsonFile(this.path)) ?? { profiles: {} },
    )
    return parsed.success ? parsed.output.profiles : {}
  }

  async get(server: string): Promise<Profile | undefined> {
    return (await this.all())[server]
  }

  async set(server: string, profile: Profile): Promise<void> {
    const profiles = await this.all()
    profiles[server] = profile
    await writePrivateJson(this.path, { profiles })
  }

  /** Forgets a server; true if there was something to forget. */
  async remove(server: string): Promise<boolean> {
    const profiles = await this.all()
    if (!(server in profiles)) return false
    const rest = Object.fromEntries(Object.entries(profiles).filter(([url]) => url !== server))
    await writePrivateJson(this.path, { profiles: rest })
    return true
  }
}
