import { collectBytes } from '../storage/object-store'

/** A Terraform state (format 4) as Terraform 1.11 writes it: pretty-printed, outputs first. */
export function terraformState(options: {
  serial: number
  lineage?: string
  outputs?: Record<string, unknown>
  resources?: number
}): string {
  const outputs = Object.fromEntries(
    Object.entries(options.outputs ?? {}).map(([name, value]) => [name, { value, type: 'string' }]),
  )
  const resources = Array.from({ length: options.resources ?? 1 }, (_, index) => ({
    mode: 'managed',
    type: 'terraform_data',
    name: `r${index}`,
    provider: 'provider["terraform.io/builtin/terraform"]',
    instances: [
      {
        schema_version: 0,
        attributes: { id: `id-${index}`, input: null },
        sensitive_attributes: [],
      },
    ],
  }))
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial: options.serial,
      lineage: options.lineage ?? '4593e995-ffd7-b8f1-575f-407cccbbd7ec',
      outputs,
      resources,
      check_results: null,
    },
    null,
    2,
  )}\n`
}

/** A one-chunk stream of a string's UTF-8 bytes, optionally split into chunks of `size`. */
export async function* bytesOf(
  text: string,
  size = Number.POSITIVE_INFINITY,
): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  for (let at = 0; at < bytes.length; at += size) {
    await Promise.resolve()
    yield bytes.subarray(at, Math.min(at + size, bytes.length))
  }
}

/** Reads a stream whole, as text. */
export async function textOf(body: AsyncIterable<Uint8Array>): Promise<string> {
  return new TextDecoder().decode(await collectBytes(body))
}
