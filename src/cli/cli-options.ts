/** Option parsers of agentctl: each turns bad input into commander's usage error (exit 2) naming the rule. */
import { InvalidArgumentError } from 'commander';
import { AgeFormatError, parseAge } from '../common/age.js';

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return port;
}

export function parseMode(value: string): 'local' | 'queue' {
  if (value !== 'local' && value !== 'queue') throw new InvalidArgumentError("must be 'local' or 'queue'");
  return value;
}

export function parsePositiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** `30d`, `12h`, `90m` → milliseconds. */
export function parseAgeOption(value: string): number {
  try {
    return parseAge(value);
  } catch (error) {
    if (error instanceof AgeFormatError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/** A thrown error that means bad usage or config (exit 2) rather than a failure (exit 1). */
export function isUsageOrConfigError(error: unknown): boolean {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return (
    code === 'unknown_agent' ||
    code === 'configuration' ||
    code === 'usage' ||
    code === 'invalid_database' ||
    // The queue room's settings error (e.g. queue mode on SQLite) carries no code.
    name === 'QueueConfigurationError'
  );
}

/** Usage errors found after parsing (option combinations, missing files). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'usage';
}
