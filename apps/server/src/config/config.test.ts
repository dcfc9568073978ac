import { describe, expect, it } from 'vitest'
import { loadConfig, type Config } from './config'
import { ConfigError } from './config-error'

/** The config for `argv` and `env`, failing the test if they ask for help instead. */
function configOf(argv: string[], env: NodeJS.ProcessEnv = {}): Config {
  const invocation = loadConfig(argv, env)
  if (!('config' in invocation)) throw new Error('expected a config, got the help text')
  return invocation.config
}

/** The message of the ConfigError that `argv` and `env` raise. */
function errorOf(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    loadConfig(argv, env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }
  throw new Error(`expected ${JSON.stringify(argv)} to be refused`)
}

describe('loadConfig', () => {
  it('uses the defaults when nothing is set', () => {
    expect(configOf([])).toEqual({
      host: '0.0.0.0',
      port: 8080,
      storage: 'fs',
      dataDir: './data',
      authDisable: false,
      maxStateBytes: 512 * 1024 * 1024,
      maxRequestBytes: 1024 * 1024,
      maxMultipartUploads: 16,
      logLevel: 'info',
      shutdownTimeoutMs: 30_000,
      lockStaleAfterMs: 3_600_000,
      auditRetentionMs: 9600 * 3_600_000,
      tokensLoginMaxAgeMs: 720 * 3_600_000,
      resourceIndex: true,
      requireClientEncryption: [],
      limits: {
        headersTimeoutMs: 20_000,
        idleTimeoutMs: 60_000,
        requestTimeoutMs: 3_600_000,
        smallBodyTimeoutMs: 10_000,
        maxConnections: 1000,
        maxConnectionsPerAddress: 250,
        maxUploads: 64,
        maxUploadsPerPrincipal: 16,
        uploadMinRate: 1024,
        uploadRateWindowMs: 30_000,
        maxHeavyReads: 8,
        maxHeavyReadsPerPrincipal: 2,
      },
      tls: undefined,
      auth: {
        issuer: undefined,
        clientId: undefined,
        clientSecret: undefined,
        authUrl: undefined,
        tokenUrl: undefined,
        devSkipVerify: false,
        localAdmin: false,
        redirectUris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
        scopes: 'openid profile email offline_access',
        privateKeyPath: undefined,
        kid: undefined,
        previousKeyPaths: [],
        previousKids: [],
        accessTtlMs: 3_600_000,
        refreshTtlMs: 720 * 3_600_000,
        iacTokenTtlMs: 3_600_000,
        oauthStateKey: undefined,
        publicBaseUrl: undefined,
      },
      rbac: { enabled: false, admins: [] },
      s3: undefined,
      metrics: { token: undefined, port: 9464, host: '127.0.0.1' },
      webhookAllowedHosts: [],
    })
  })

  describe('metrics', () => {
    it.each([
      [['-metrics-port', '0'], {}, 0],
      [['-metrics-port', '-1'], {}, undefined],
      [[], { SVC_METRICS_PORT: 'off' }, undefined],
      [[], { SVC_METRICS_PORT: '9100' }, 9100],
    ])('serves the loopback listener on %j %j at port %s', (argv, env, port) => {
      expect(configOf(argv, env).metrics).toEqual({ token: undefined, port, host: '127.0.0.1' })
    })

    it('serves metrics on the main listener alone when a token is set', () => {
      const token = 'm'.repeat(32)
      expect(configOf(['-metrics-port', '9100'], { SVC_METRICS_TOKEN: token }).metrics).toEqual({
        token,
        port: undefined,
        host: '127.0.0.1',
      })
    })

    it.each([
      [['-metrics-host', '0.0.0.0'], {}, '0.0.0.0'],
      [[], { SVC_METRICS_HOST: '0.0.0.0' }, '0.0.0.0'],
      [[], { SVC_METRICS_HOST: '::' }, '::'],
    ])('binds the metrics listener where %j %j say: %s', (argv, env, host) => {
      expect(configOf(argv, env).metrics).toEqual({ token: undefined, port: 9464, host })
    })

    it.each(['', 'localhost', '0.0.0.0:9464', 'every'])('refuses -metrics-host %j', (host) => {
      expect(errorOf(['-metrics-host', host])).toBe(
        '-metrics-host (SVC_METRICS_HOST) must be an IP address such as 127.0.0.1 or 0.0.0.0',
      )
    })

    it('refuses a metrics token shorter than 32 characters', () => {
      expect(errorOf([], { SVC_METRICS_TOKEN: 'short' })).toMatch(
        /^SVC_METRICS_TOKEN must be at least 32 characters/,
      )
    })

    it.each(['65536', 'nine', '-2'])('refuses -metrics-port %s', (port) => {
      expect(errorOf(['-metrics-port', port])).toMatch(/-metrics-port \(SVC_METRICS_PORT\)/)
    })
  })

  describe('S3 storage', () => {
    it('needs a bucket, and fills the rest from flags, variables and the AWS region', () => {
      expect(errorOf(['-storage', 's3'])).toBe(
        '-storage s3 needs -s3-bucket (SVC_S3_BUCKET): the bucket to keep units in',
      )
      expect(
        configOf(['-storage', 's3', '-s3-bucket', 'states'], { AWS_REGION: 'eu-west-1' }).s3,
      ).toEqual({
        bucket: 'states',
        prefix: '',
        region: 'eu-west-1',
        endpoint: undefined,
        pathStyle: false,
        requestTimeoutMs: 30_000,
        maxAttempts: 4,
      })
      expect(
        configOf([], {
          SVC_STORAGE: 's3',
          SVC_S3_BUCKET: 'states',
          SVC_S3_PREFIX: 'cairn',
          SVC_S3_ENDPOINT: 'http://127.0.0.1:7480',
          SVC_S3_REQUEST_TIMEOUT: '2s',
          SVC_S3_MAX_ATTEMPTS: '2',
        }).s3,
      ).toEqual({
        bucket: 'states',
        prefix: 'cairn/',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:7480',
        pathStyle: true,
        requestTimeoutMs: 2_000,
        maxAttempts: 2,
      })
    })

    it('refuses a bad bucket, endpoint or prefix, and S3 settings for another store', () => {
      expect(errorOf(['-storage', 's3', '-s3-bucket', 'Bad_Bucket'])).toMatch(/^-s3-bucket/)
      expect(errorOf(['-storage', 's3', '-s3-bucket', 'b1b', '-s3-endpoint', 'nope'])).toMatch(
        /^-s3-endpoint/,
      )
      expect(errorOf(['-storage', 's3', '-s3-bucket', 'b1b', '-s3-prefix', 'a b'])).toMatch(
        /^-s3-prefix/,
      )
      expect(errorOf(['-storage', 's3', '-s3-bucket', 'b1b', '-s3-max-attempts', '0'])).toBe(
        '-s3-max-attempts (SVC_S3_MAX_ATTEMPTS) must be at least 1',
      )
      expect(errorOf(['-storage', 's3', '-s3-bucket', 'b1b', '-s3-request-timeout', '5ms'])).toBe(
        '-s3-request-timeout (SVC_S3_REQUEST_TIMEOUT) must be at least 100 ms',
      )
      expect(errorOf(['-s3-bucket', 'states'])).toBe(
        '-s3-bucket is for -storage s3, but the storage is fs',
      )
    })
  })

  it('returns a frozen config', () => {
    expect(Object.isFrozen(configOf([]))).toBe(true)
  })

  it('takes every setting from its environment variable', () => {
    const env = {
      SVC_HOST: '127.0.0.1',
      PORT: '9090',
      SVC_STORAGE: 'memory',
      SVC_DATA_DIR: '/var/lib/cairn',
      SVC_AUTH_DISABLE: 'true',
      SVC_MAX_STATE_BYTES: '2048',
      SVC_MAX_REQUEST_BYTES: '4096',
      SVC_MAX_MULTIPART_UPLOADS: '3',
      SVC_LOG_LEVEL: 'debug',
      SVC_SHUTDOWN_TIMEOUT: '1m30s',
      SVC_LOCK_STALE_AFTER: '2h30m',
      SVC_AUDIT_RETENTION: '720h',
      SVC_TOKENS_LOGIN_MAX_AGE: '168h',
      SVC_RESOURCE_INDEX: 'false',
    }
    expect(configOf([], env)).toMatchObject({
      host: '127.0.0.1',
      port: 9090,
      storage: 'memory',
      dataDir: '/var/lib/cairn',
      authDisable: true,
      maxStateBytes: 2048,
      maxRequestBytes: 4096,
      maxMultipartUploads: 3,
      logLevel: 'debug',
      shutdownTimeoutMs: 90_000,
      lockStaleAfterMs: 9_000_000,
      auditRetentionMs: 720 * 3_600_000,
      tokensLoginMaxAgeMs: 168 * 3_600_000,
      resourceIndex: false,
    })
  })

  it('reads the identity settings from their variables', () => {
    const auth = configOf([], {
      SVC_AUTH_ISSUER: 'https://id.example.test/realms/x/',
      SVC_AUTH_CLIENT_ID: 'cairn',
      SVC_AUTH_DEV_SKIP_VERIFY: 'true',
      SVC_AUTH_REDIRECT_URIS: 'http://127.0.0.1:8585/callback, http://localhost:8585/callback',
      SVC_TOKENS_PRIVATE_KEY_PEM_PATH: '/keys/current.pem',
      SVC_TOKENS_KID: 'k2',
      SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS: '/keys/k1.pem',
      SVC_TOKENS_PREVIOUS_KIDS: 'k1',
      SVC_TOKENS_ACCESS_TTL: '15m',
      SVC_TOKENS_REFRESH_TTL: '24h',
      SVC_OAUTH_STATE_KEY: 'x'.repeat(32),
      SVC_PUBLIC_BASE_URL: 'https://cairn.example.test/',
    }).auth
    expect(auth).toMatchObject({
      issuer: 'https://id.example.test/realms/x/',
      clientId: 'cairn',
      devSkipVerify: true,
      redirectUris: ['http://127.0.0.1:8585/callback', 'http://localhost:8585/callback'],
      privateKeyPath: '/keys/current.pem',
      kid: 'k2',
      previousKeyPaths: ['/keys/k1.pem'],
      previousKids: ['k1'],
      accessTtlMs: 900_000,
      refreshTtlMs: 86_400_000,
      publicBaseUrl: 'https://cairn.example.test',
    })
  })

  it.each([
    [
      'an issuer without a client ID',
      { SVC_AUTH_ISSUER: 'https://id.example.test' },
      'SVC_AUTH_CLIENT_ID',
    ],
    [
      'an issuer that is not a URL',
      { SVC_AUTH_ISSUER: 'id.example.test', SVC_AUTH_CLIENT_ID: 'c' },
      'SVC_AUTH_ISSUER',
    ],
    [
      'a state key shorter than 32 characters',
      { SVC_OAUTH_STATE_KEY: 'short' },
      'SVC_OAUTH_STATE_KEY',
    ],
    [
      'a malformed access token lifetime',
      { SVC_TOKENS_ACCESS_TTL: '1 hour' },
      'SVC_TOKENS_ACCESS_TTL',
    ],
    ['a zero refresh token lifetime', { SVC_TOKENS_REFRESH_TTL: '0' }, 'SVC_TOKENS_REFRESH_TTL'],
    ['a malformed remote-backend token lifetime', { SVC_IAC_TOKEN_TTL: '1d' }, 'SVC_IAC_TOKEN_TTL'],
    [
      'a public URL that is not a URL',
      { SVC_PUBLIC_BASE_URL: 'cairn.example.test' },
      'SVC_PUBLIC_BASE_URL',
    ],
    [
      'previous key IDs that do not match the paths',
      { SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS: '/a.pem,/b.pem', SVC_TOKENS_PREVIOUS_KIDS: 'a' },
      'SVC_TOKENS_PREVIOUS_KIDS',
    ],
  ])('refuses %s, naming the variable', (_label, env, named) => {
    expect(errorOf([], env)).toContain(named)
  })

  it.each([
    ['-port', ['-port', '9999'], { PORT: '7777' }, { port: 9999 }],
    ['-storage', ['-storage', 'memory'], { SVC_STORAGE: 'fs' }, { storage: 'memory' }],
    ['-data-dir', ['-data-dir', '/flag'], { SVC_DATA_DIR: '/env' }, { dataDir: '/flag' }],
    [
      '-auth-disable',
      ['-auth-disable=false'],
      { SVC_AUTH_DISABLE: 'true' },
      { authDisable: false },
    ],
    ['-log-level', ['-log-level', 'warn'], { SVC_LOG_LEVEL: 'error' }, { logLevel: 'warn' }],
    [
      '-shutdown-timeout',
      ['-shutdown-timeout', '5s'],
      { SVC_SHUTDOWN_TIMEOUT: '1h' },
      { shutdownTimeoutMs: 5000 },
    ],
    [
      '-lock-stale-after',
      ['-lock-stale-after', '10m'],
      { SVC_LOCK_STALE_AFTER: '1h' },
      { lockStaleAfterMs: 600_000 },
    ],
  ])('lets the flag %s beat its environment variable', (_flag, argv, env, expected) => {
    expect(configOf(argv, env)).toMatchObject(expected)
  })

  it('treats an empty environment variable as unset', () => {
    expect(configOf([], { PORT: '', SVC_STORAGE: '' })).toMatchObject({ port: 8080, storage: 'fs' })
  })

  it.each([
    ['-port 9000', ['-port', '9000']],
    ['--port 9000', ['--port', '9000']],
    ['-port=9000', ['-port=9000']],
    ['--port=9000', ['--port=9000']],
  ])('reads a flag written as %s', (_label, argv) => {
    expect(configOf(argv).port).toBe(9000)
  })

  it('keeps an = inside a value given as -flag=value', () => {
    expect(configOf(['-data-dir=/srv/a=b']).dataDir).toBe('/srv/a=b')
  })

  it.each([
    [['-auth-disable'], {}, true],
    [['--auth-disable'], {}, true],
    [['-auth-disable=true'], {}, true],
    [['-auth-disable=1'], {}, true],
    [['-auth-disable=false'], {}, false],
    [['--auth-disable=0'], {}, false],
    [[], { SVC_AUTH_DISABLE: '1' }, true],
    [[], { SVC_AUTH_DISABLE: 'false' }, false],
  ])('reads the boolean %j with env %j as %s', (argv, env, expected) => {
    expect(configOf(argv, env).authDisable).toBe(expected)
  })

  it('does not take the word after a boolean flag as its value', () => {
    expect(errorOf(['-auth-disable', 'false'])).toContain('"false"')
  })

  it.each([['-version'], ['--version'], ['-version=true']])(
    'answers %s with the version alone, whatever else is set',
    (flag) => {
      expect(loadConfig([flag, '-storage', 's3'], { PORT: 'eighty' })).toEqual({ version: true })
    },
  )

  it.each([['-help'], ['--help'], ['-help=true']])(
    'answers %s with help text that lists every flag',
    (flag) => {
      const invocation = loadConfig([flag], {})
      if (!('help' in invocation)) throw new Error('expected the help text')
      for (const name of ['-host', '-port', '-storage', '-data-dir', '-auth-disable', '-help']) {
        expect(invocation.help).toContain(name)
      }
      expect(invocation.help).toContain('[PORT]')
    },
  )

  it.each([
    ['-max-state-bytes value [SVC_MAX_STATE_BYTES]', 'largest state accepted (default 536870912)'],
    [
      '-storage value [SVC_STORAGE]',
      'fs (default), s3 (one bucket shared by many instances) or memory (lost on exit)',
    ],
    ['-log-level value [SVC_LOG_LEVEL]', 'debug, info (default), warn or error'],
    ['-auth-disable [SVC_AUTH_DISABLE]', 'serve without authentication (development only)'],
    [
      '-audit-retention value [SVC_AUDIT_RETENTION]',
      'how long audit records are kept, as a Go duration, at least 24h (default 9600h: 400 days)',
    ],
    [
      '-webhook-allowed-hosts value [SVC_WEBHOOK_ALLOWED_HOSTS]',
      'comma-separated host names, IP addresses and CIDR ranges that webhooks may reach although loopback, private, link-local or cloud metadata (default none)',
    ],
  ])('shows %s in the help with its default: %s', (flag, line) => {
    const invocation = loadConfig(['-help'], {})
    if (!('help' in invocation)) throw new Error('expected the help text')
    expect(invocation.help).toContain(`  ${flag}\n      ${line}\n`)
  })

  it.each([
    ['an unknown flag', ['-nope'], {}, '-nope'],
    ['a flag with no value', ['-port'], {}, '-port'],
    ['a port that is not a number', ['-port', 'abc'], {}, '-port'],
    ['a port over 65535', ['-port', '65536'], {}, '-port'],
    ['a negative port', ['-port=-1'], {}, '-port'],
    ['an unknown storage', ['-storage', 'nfs'], {}, '-storage'],
    ['an empty data directory', ['-data-dir='], {}, '-data-dir'],
    ['an empty host', ['-host='], {}, '-host'],
    ['a boolean that is not true or false', ['-auth-disable=yes'], {}, '-auth-disable'],
    ['a state limit of 0', ['-max-state-bytes', '0'], {}, '-max-state-bytes'],
    ['a request limit under 1024', ['-max-request-bytes', '10'], {}, '-max-request-bytes'],
    ['a multipart upload cap of 0', ['-max-multipart-uploads', '0'], {}, '-max-multipart-uploads'],
    ['an unknown log level', ['-log-level', 'loud'], {}, '-log-level'],
    ['a timeout without a unit', ['-shutdown-timeout', '30'], {}, '-shutdown-timeout'],
    ['a stale-lock age under 1s', ['-lock-stale-after', '10ms'], {}, '-lock-stale-after'],
    ['a login max age under 1m', ['-tokens-login-max-age', '30s'], {}, '-tokens-login-max-age'],
    ['a bad PORT variable', [], { PORT: 'http' }, 'PORT'],
    ['a bad SVC_STORAGE variable', [], { SVC_STORAGE: 'nfs' }, 'SVC_STORAGE'],
    [
      'a bad SVC_SHUTDOWN_TIMEOUT variable',
      [],
      { SVC_SHUTDOWN_TIMEOUT: '1d' },
      'SVC_SHUTDOWN_TIMEOUT',
    ],
  ])('refuses %s with a ConfigError naming it', (_label, argv, env, named) => {
    expect(errorOf(argv, env)).toContain(named)
  })

  it('refuses a stray argument, quoting it', () => {
    expect(errorOf(['-port', '8080', 'extra'])).toContain('"extra"')
  })

  describe('RBAC', () => {
    it.each<[string[], NodeJS.ProcessEnv, boolean]>([
      [[], {}, false],
      [['-rbac'], {}, true],
      [['--rbac=true'], {}, true],
      [['-rbac=false'], { SVC_RBAC_ENABLED: 'true' }, false],
      [[], { SVC_RBAC_ENABLED: 'true' }, true],
      [[], { SVC_RBAC_ENABLED: 'false' }, false],
      [[], { SVC_RBAC_ENABLED: '' }, false],
    ])('reads %j with env %j as RBAC on: %s', (argv, env, expected) => {
      expect(configOf(argv, env).rbac.enabled).toBe(expected)
    })

    it('reads the administrators, trimmed, an email in lower case, each once', () => {
      const env = {
        SVC_RBAC_ADMINS: ' user:alice , email:Ops@Example.test,,group:platform,user:alice',
      }
      expect(configOf(['-rbac'], env).rbac).toEqual({
        enabled: true,
        admins: ['user:alice', 'email:ops@example.test', 'group:platform'],
      })
    })

    it('lets -rbac-admins beat SVC_RBAC_ADMINS, and keeps the settings frozen', () => {
      const rbac = configOf(['-rbac-admins', 'group:sre'], { SVC_RBAC_ADMINS: 'user:alice' }).rbac
      expect(rbac.admins).toEqual(['group:sre'])
      expect(Object.isFrozen(rbac)).toBe(true)
      expect(Object.isFrozen(rbac.admins)).toBe(true)
    })

    it.each([
      ['a switch that is not true or false', ['-rbac=yes'], {}, '-rbac (SVC_RBAC_ENABLED)'],
      ['a bad SVC_RBAC_ENABLED', [], { SVC_RBAC_ENABLED: 'on' }, 'SVC_RBAC_ENABLED'],
      ['an administrator of no known kind', [], { SVC_RBAC_ADMINS: 'user:a,alice' }, '"alice"'],
      ['an administrator with no name', ['-rbac-admins', 'group:'], {}, '"group:"'],
      ['an administrator of an unknown kind', ['-rbac-admins=role:admin'], {}, '"role:admin"'],
    ])('refuses %s, naming it', (_label, argv, env, named) => {
      const message = errorOf(argv, env)
      expect(message).toContain(named)
      if (named.startsWith('"')) expect(message).toContain('SVC_RBAC_ADMINS')
    })

    it('lists -rbac and -rbac-admins with their variables in the help', () => {
      const invocation = loadConfig(['-help'], {})
      if (!('help' in invocation)) throw new Error('expected the help text')
      expect(invocation.help).toContain('-rbac [SVC_RBAC_ENABLED]')
      expect(invocation.help).toContain('-rbac-admins value [SVC_RBAC_ADMINS]')
    })
  })

  describe('client encryption', () => {
    it('reads -require-client-encryption as scopes, each once, none by default', () => {
      expect(configOf([]).requireClientEncryption).toEqual([])
      const env = { SVC_REQUIRE_CLIENT_ENCRYPTION: ' prod/*, vault,,prod/*' }
      expect(configOf([], env).requireClientEncryption).toEqual(['prod/*', 'vault'])
    })

    it('refuses an entry that is no scope, naming the setting', () => {
      const message = errorOf(['-require-client-encryption', 'prod/*,prod/'])
      expect(message).toContain('-require-client-encryption (SVC_REQUIRE_CLIENT_ENCRYPTION)')
      expect(message).toContain('"prod/"')
    })
  })

  describe('webhook targets', () => {
    it('reads -webhook-allowed-hosts over SVC_WEBHOOK_ALLOWED_HOSTS, trimmed and each once', () => {
      const env = { SVC_WEBHOOK_ALLOWED_HOSTS: 'hooks.internal' }
      expect(configOf([], env).webhookAllowedHosts).toEqual(['hooks.internal'])
      const argv = ['-webhook-allowed-hosts', ' 10.0.0.0/8, hooks.internal,,10.0.0.0/8,[::1]']
      const allowed = configOf(argv, env).webhookAllowedHosts
      expect(allowed).toEqual(['10.0.0.0/8', 'hooks.internal', '[::1]'])
      expect(Object.isFrozen(allowed)).toBe(true)
    })

    it.each(['*.internal', 'hooks.internal:8443', 'https://hooks.internal', '10.0.0.0/40'])(
      'refuses the entry %s, naming it and the setting',
      (entry) => {
        const message = errorOf([], { SVC_WEBHOOK_ALLOWED_HOSTS: `hooks.internal,${entry}` })
        expect(message).toContain('-webhook-allowed-hosts (SVC_WEBHOOK_ALLOWED_HOSTS)')
        expect(message).toContain(JSON.stringify(entry))
      },
    )
  })
})
