/** Errors of the tools room raised before anything runs (bootstrap, configuration). */

/** A `@Tool` declaration or tools configuration is invalid; fails the bootstrap and names where. */
export class ToolConfigurationError extends Error {
  override readonly name = 'ToolConfigurationError';
  readonly code = 'configuration';
}
