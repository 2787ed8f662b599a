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

const REDACTED_KEYS: readonly string[] = ['authorization', 'cookie', 'token', 'apiKey', 'password', 'secret'];
const REDACT = REDACTED_KEYS.flatMap((key) => [key, `*.${key}`, `*.headers.${key}`]);

/** No `REDACT` path can match: no redacted key at the top, no object below it. */
function nothingToRedact(fields: Record<string, unknown>): boolean {
  for (const key in fields) {
    if (REDACTED_KEYS.includes(key)) return false;
    const value = fields[key];
    if (typeof value === 'object' && value !== null) return false;
  }
  return true;
}

export class JsonLogger implements LoggerService {
  readonly pino: PinoLogger;
  /**
   * The same logger without redaction, for lines whose fields are all flat values under keys that are not
   * redacted (the request log's): redaction could change nothing there, and its wildcard paths would walk
   * every field of every request line for nothing. No content is logged either way (S1).
   */
  private readonly flat: PinoLogger;
  private readonly scope = new AsyncLocalStorage<RequestScope>();
  /** The default destination, flushed at once after an error line. */
  private stdout: BatchedDestination | undefined;

  constructor(options: JsonLoggerOptions = {}) {
    const wanted = (options.level ?? process.env.LOG_LEVEL ?? 'info').toLowerCase();
    const scope = this.scope;
    const settings: pino.LoggerOptions = {
      level: LEVELS.includes(wanted) ? wanted : 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const current = scope.getStore();
        return current ? { requestId: current.requestId } : {};
      },
    };
    const destination = options.destination ?? (this.stdout = batchedStdout());
    this.pino = pino({ ...settings, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
    this.flat = pino(settings, destination);
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
    this.flat.level = this.pino.level;
  }

  /**
   * Nest calls `log(message, context)` and `error(message, stack?, context)`; the context is the last
   * string parameter, a stack the string before it.
   */
  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    // `pino` is public: whoever changes its level changes the flat logger's too.
    if (this.flat.level !== this.pino.level) this.flat.level = this.pino.level;
    const rest = [...params];
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const stack = rest.find((param): param is string => typeof param === 'string' && param.includes('\n'));
    const fields: Record<string, unknown> = context ? { context } : {};
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: describeError(message) }, message.message);
    } else if (message !== null && typeof message === 'object') {
      // A structured line (e.g. the request log): its fields, with `msg` as the message.
      const { msg, ...data } = message as Record<string, unknown>;
      const line = { ...data, ...fields };
      (nothingToRedact(line) ? this.flat : this.pino)[level](line, typeof msg === 'string' ? msg : '');
    } else if (stack) {
      this.pino[level]({ ...fields, err: { stack } }, String(message));
    } else {
      this.flat[level](fields, String(message));
    }
    if (level === 'error' || level === 'fatal') this.stdout?.flushSync();
  }
}

function describeError(error: Error): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return { type: error.name, ...(typeof code === 'string' ? { code } : {}), ...(error.stack ? { stack: error.stack } : {}) };
}
