import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * The logger of commands whose stdout is their answer (`agentctl run`): warnings and errors only, all on
 * stderr. A failed boot is reported once, by agentctl itself, so Nest's own report of it is dropped.
 */
export class CliLogger extends ConsoleLogger {
  constructor() {
    super({ logLevels: ['warn', 'error', 'fatal'] });
  }

  override error(message: unknown, ...params: unknown[]): void {
    if (params[params.length - 1] === 'ExceptionHandler') return;
    super.error(message, ...params);
  }

  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _stream?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}
