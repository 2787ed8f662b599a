/**
 * A bad server setting (API keys, the caller env allow-list, a non-loopback host without keys). Its code
 * makes `agentctl serve` exit 2 (bad usage or config, DESIGN §9). Messages name the variable, file and
 * line, never a key.
 */
export class ServerConfigurationError extends Error {
  override readonly name = 'ServerConfigurationError';
  readonly code = 'configuration';
}
