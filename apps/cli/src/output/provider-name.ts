/** The public registries whose host a provider's short name leaves out. */
const DEFAULT_HOSTS = ['registry.terraform.io/', 'registry.opentofu.org/']

/**
 * A provider as people write it: `hashicorp/aws` for `registry.terraform.io/hashicorp/aws` or
 * the state's `provider["registry.terraform.io/hashicorp/aws"]`, an alias kept after a dot
 * (`hashicorp/aws.east`), a private registry's host kept.
 */
export function providerName(provider: string): string {
  const quoted = /provider\["([^"]+)"\](?:\.(.+))?$/.exec(provider)
  const source = quoted?.[1] ?? provider
  const alias = quoted?.[2]
  const host = DEFAULT_HOSTS.find((prefix) => source.startsWith(prefix))
  const short = host === undefined ? source : source.slice(host.length)
  return alias === undefined ? short : `${short}.${alias}`
}
