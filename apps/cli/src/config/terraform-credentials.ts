import { join } from 'node:path'
import { homedir } from 'node:os'
import * as v from 'valibot'
import { readJsonFile, writePrivateJson } from './files'

const TerraformCredentialsSchema = v.object({
  credentials: v.record(v.string(), v.object({ token: v.string() })),
})

/**
 * The token `terraform login` saved for a server's host, from
 * `~/.terraform.d/credentials.tfrc.json` (keyed by host, with the port when there is one).
 */
export async function terraformToken(
  server: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const path = terraformCredentialsPath(env)
  const parsed = v.safeParse(
    TerraformCredentialsSchema,
    await readJsonFile(path).catch(() => undefined),
  )
  if (!parsed.success) return undefined
  return parsed.output.credentials[new URL(server).host]?.token
}

/** Where `terraform login` keeps the tokens it saved. */
export function terraformCredentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env['HOME'] ?? homedir(), '.terraform.d', 'credentials.tfrc.json')
}

/**
 * Saves `token` for a server's host where `terraform login` would, beside the others kept there,
 * so Terraform's `cloud` block uses it (`cairn login --ci`). The file stays readable by its owner only.
 */
export async function saveTerraformToken(
  server: string,
  token: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const path = terraformCredentialsPath(env)
  const parsed = v.safeParse(
    TerraformCredentialsSchema,
    await readJsonFile(path).catch(() => undefined),
  )
  const credentials = parsed.success ? parsed.output.credentials : {}
  await writePrivateJson(path, {
    credentials: { ...credentials, [new URL(server).host]: { token } },
  })
  return path
}
