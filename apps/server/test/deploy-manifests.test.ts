import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Service } from 'kubernetes-models/v1'
import { parseAllDocuments } from 'yaml'
import { describe, expect, it } from 'vitest'

const KUBERNETES = fileURLToPath(new URL('../../../deploy/kubernetes/', import.meta.url))

/** Every document of a manifest, as the API server would take it: each checked by its schema. */
async function manifest(name: string): Promise<(Deployment | Service)[]> {
  const text = await readFile(`${KUBERNETES}${name}`, 'utf8')
  return parseAllDocuments(text).map((document) => {
    expect(document.errors).toEqual([])
    const value = document.toJS() as { kind?: string }
    const model =
      value.kind === 'Deployment'
        ? new Deployment(value as ConstructorParameters<typeof Deployment>[0])
        : value.kind === 'Service'
          ? new Service(value as ConstructorParameters<typeof Service>[0])
          : undefined
    if (model === undefined)
      throw new Error(`${name}: no schema here for kind ${value.kind ?? '?'}`)
    // Throws, naming the field, when the document does not match the Kubernetes schema.
    model.validate()
    return model
  })
}

describe('the Kubernetes manifests of deploy/ (checked against the Kubernetes schemas; no cluster runs here)', () => {
  it('run several server instances over S3 with runs on, behind a Service, probed as docs/deployment.md says', async () => {
    const [deployment, service] = (await manifest('cairn.yaml')) as [Deployment, Service]
    expect(deployment.spec?.replicas).toBeGreaterThan(1)
    const container = deployment.spec?.template.spec?.containers[0]
    expect(container?.args).toContain('-runs')
    expect(container?.env).toContainEqual({ name: 'SVC_STORAGE', value: 's3' })
    expect(container?.readinessProbe?.httpGet?.path).toBe('/readyz')
    expect(container?.livenessProbe?.httpGet?.path).toBe('/healthz')
    expect(service.spec?.selector).toEqual(deployment.spec?.selector.matchLabels)
  })

  it('run agents that reach the Service outbound, with their token from a Secret and nothing else', async () => {
    const [[service], [agents]] = (await Promise.all([
      manifest('cairn.yaml'),
      manifest('agents.yaml'),
    ]).then(([server, agent]) => [server.slice(1), agent])) as [[Service], [Deployment]]
    const pod = agents.spec?.template.spec
    const container = pod?.containers[0]
    const args = container?.args ?? []
    expect(args.slice(0, 1)).toEqual(['agent'])
    expect(args[args.indexOf('--server') + 1]).toBe(
      `http://${service.metadata?.name ?? ''}:${String(service.spec?.ports?.[0]?.port)}`,
    )
    const tokenFile = args[args.indexOf('--token-file') + 1] ?? ''
    const mount = container?.volumeMounts?.find((volume) =>
      tokenFile.startsWith(`${volume.mountPath}/`),
    )
    const volume = pod?.volumes?.find((candidate) => candidate.name === mount?.name)
    expect(volume?.secret?.secretName).toBe('cairn-agent-token')
    // No token inline, no service account token, no listening port.
    expect(container?.env ?? []).toEqual([])
    expect(pod?.automountServiceAccountToken).toBe(false)
    expect(container?.ports ?? []).toEqual([])
    expect(pod?.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30)
  })
})
