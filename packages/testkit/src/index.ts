export { awsCliBinary } from './aws-cli'
export type { CiIssuer, CiIssuerOptions } from './ci-issuer'
export { startCiIssuer } from './ci-issuer'
export type { LaunchBrowserOptions } from './chromium'
export { chromiumBinary, launchBrowser } from './chromium'
export { CookieJar } from './cookie-jar'
export { fetchAs } from './fetch-as'
export type {
  ExchangeCodeOptions,
  FollowAuthorizationOptions,
  GetIdTokenOptions,
  LoginResult,
  LoginWithPkceOptions,
  PkcePair,
  ProviderMetadata,
  RefreshOptions,
  TokenResponse,
} from './login-flow'
export {
  DEFAULT_SCOPES,
  discover,
  exchangeCode,
  followAuthorization,
  getIdToken,
  idTokenThroughServer,
  loginWithPkce,
  OAuthError,
  pkcePair,
  refreshTokens,
} from './login-flow'
export type {
  OidcAccount,
  OidcClient,
  OidcTtl,
  PrivateJwks,
  RunningProvider,
  StartOidcProviderOptions,
} from './oidc-provider'
export { generateSigningKey, SCOPES, startOidcProvider } from './oidc-provider'
export type { CspViolation, PageWatch } from './page-watch'
export { watchPage } from './page-watch'
export type { RunningRgw, StartRgwOptions } from './rgw'
export { startRgw } from './rgw'
export type { RunningServer, ServerOptions } from './server-process'
export { readAdminToken, SERVER_MAIN, startServer } from './server-process'
export type { RunningTerraform, TerraformResult } from './terraform'
export { httpBackendConfig, s3BackendBlock, TerraformWorkspace, terraformBinary } from './terraform'
export { deliverToTerraform } from './terraform-callback'
export type { HttpsAnswer, TestCa } from './tls'
export { httpsRequest, makeTestCa } from './tls'
export type { SuiteCa } from './use-test-ca'
export { useTestCa } from './use-test-ca'
export type { SuiteServer, UseServerOptions } from './use-server'
export { useServer } from './use-server'
export { useRgw, type UseRgwOptions } from './use-rgw'
export { freePort } from './free-port'
export { startStallingProxy, type StallingProxy } from './stalling-proxy'
export { isRunning } from './is-running'
export { waitFor } from './wait-for'
export type { Browser, BrowserContext, Page } from 'playwright-core'
