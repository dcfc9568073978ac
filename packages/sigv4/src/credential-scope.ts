/** The parts of `AKID/20130524/us-east-1/s3/aws4_request`. */
export interface Credential {
  accessKeyId: string
  scope: { date: string; region: string; service: string }
}

/**
 * Splits a SigV4 credential. The access key is everything before the last four parts, so a key
 * holding '/' still reads. Undefined when the shape is wrong (the caller names the error: the header
 * and query forms use different codes).
 */
export function parseCredential(value: string): Credential | undefined {
  const parts = value.split('/')
  if (parts.length < 5) return undefined
  const [date, region, service, terminator] = parts.slice(-4) as [string, string, string, string]
  const accessKeyId = parts.slice(0, -4).join('/')
  if (accessKeyId === '' || region === '' || service === '') return undefined
  if (!/^\d{8}$/.test(date) || terminator !== 'aws4_request') return undefined
  return { accessKeyId, scope: { date, region, service } }
}
