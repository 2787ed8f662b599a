/**
 * SIGTERM / SIGINT: stop accepting connections at once, then close the app — the module's
 * `ShutdownCoordinator` (SPEC G4) stops taking steps, lets a running step finish its current tool call
 * within `SHUTDOWN_GRACE_MS` (10 s) or cuts it without a result, flushes the timeline, and only after the
 * HTTP server closed runs `on_engine_stop` and closes MCP, webhook, Redis and database clients — and exit 0.
 * Not Nest's `enableShutdownHooks`: it re-raises the signal after closing, so the process would end by the signal instead of with code 0.
 * A shutdown that takes longer than `timeoutMs`, or a second signal, exits 1.
 */
import { Logger, type INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';

export interface ShutdownOptions {
  /** Default `SHUTDOWN_TIMEOUT_MS` from the environment, else 25 s (inside Kubernetes' 30 s grace period). */
  timeoutMs?: number;
  /** Replaced in tests; default `process.exit`. */
  exit?: (code: number) => void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export function closeOnSignals(app: INestApplication, options: ShutdownOptions = {}): void {
  const logger = new Logger('Server');
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const timeoutMs = options.timeoutMs ?? (Number(process.env.SHUTDOWN_TIMEOUT_MS) || 25_000);
  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.error(`${signal} received again; exiting without finishing the shutdown`);
      exit(1);
      return;
    }
    closing = true;
    logger.log(`${signal} received; shutting down`);
    // New connections are refused from now on; idle keep-alive ones close, requests in flight finish.
    (app.getHttpServer() as Server).close();
    const deadline = setTimeout(() => {
      logger.error(`shutdown did not finish within ${timeoutMs} ms; exiting`);
      exit(1);
    }, timeoutMs);
    deadline.unref();
    app.close().then(
      () => {
        clearTimeout(deadline);
        logger.log('shut down');
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error(`shutdown failed (${error instanceof Error ? error.name : typeof error})`);
        exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, stop);
}
