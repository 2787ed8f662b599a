/**
 * The standalone server's logger: one JSON object per line on stdout (pino), for Nest and for our code.
 * Every line has `level`, `time`, `context` (the Nest logger name) and `msg`; lines written while a request
 * is handled carry its `requestId` (an AsyncLocalStorage per logger, so two apps in one process never mix).
 * What is logged is decided by the callers (S1: never auth headers, tokens, prompts, arguments or results);
 * common secret-bearing keys are redacted all the same, should an object carrying one ever be logged.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService, LogLevel } from '@nestjs/common';
import pino, { type Level, type Logger as PinoLogger } from 'pino';
import { batchedStdout, type BatchedDestination } from './batched-stdout.js';

export interface JsonLoggerOptions {
  /** `trace` … `fatal`, or `silent`; default `LOG_LEVEL` from the environment, else `info`. */
  level?: string;
  /** Where lines go; default stdout, batched per event-loop turn and flushed at `process.exit` (`batched-stdout.ts`). */
  destination?: pino.DestinationStream;
}

interface RequestScope {
  readonly requestId: string;
}

const LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

const NEST_TO_PINO: Record<LogLevel, Level> = { verbose: 'trace', debug: 'debug', log: 'info', warn: 'warn', error: 'error', fatal: 'fatal' };

const REDACT = ['authorization', 'cookie', 'token', 'apiKey', 'password', 'secret'].flatMap((key) => [key, `*.${key}`, `*.headers.${key}`]);

export class JsonLogger implements LoggerService {
  readonly pino: PinoLogger;
  private readonly scope = new AsyncLocalStorage<RequestScope>();
  /** The default destination, flushed at once after an error line. */
  private stdout: BatchedDestination | undefined;

  constructor(options: JsonLoggerOptions = {}) {
    const wanted = (options.level ?? process.env.LOG_LEVEL ?? 'info').toLowerCase();
    const scope = this.scope;
    this.pino = pino(
      {
        level: LEVELS.includes(wanted) ? wanted : 'info',
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: REDACT, censor: '[redacted]' },
        mixin: () => {
          const current = scope.getStore();
          return current ? { requestId: current.requestId } : {};
        },
      },
      options.destination ?? (this.stdout = batchedStdout()),
    );
  }

  /** Runs `work` (a request's middleware chain) with `requestId` on every line it logs. */
  withRequest<T>(requestId: string, work: () => T): T {
    return this.scope.run({ requestId }, work);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest's `logger: ['error', 'warn']` style: the lowest level given wins. */
  setLogLevels(levels: LogLevel[]): void {
    const order: Level[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
    const lowest = levels.map((level) => NEST_TO_PINO[level]).sort((a, b) => order.indexOf(a) - order.indexOf(b))[0];
    this.pino.level = lowest ?? 'silent';
  }

  /**
   * Nest calls `log(message, context)` and `error(message, stack?, context)`; the context is the last
   * string parameter, a stack the string before it.
   */
  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const stack = rest.find((param): param is string => typeof param === 'string' && param.includes('\n'));
    const fields: Record<string, unknown> = context ? { context } : {};
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: describeError(message) }, message.message);
    } else if (message !== null && typeof message === 'object') {
      // A structured line (e.g. the request log): its fields, with `msg` as the message.
      const { msg, ...data } = message as Record<string, unknown>;
      this.pino[level]({ ...data, ...fields }, typeof msg === 'string' ? msg : '');
    } else {
      this.pino[level](stack ? { ...fields, err: { stack } } : fields, String(message));
    }
    if (level === 'error' || level === 'fatal') this.stdout?.flushSync();
  }
}

function describeError(error: Error): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return { type: error.name, ...(typeof code === 'string' ? { code } : {}), ...(error.stack ? { stack: error.stack } : {}) };
}
