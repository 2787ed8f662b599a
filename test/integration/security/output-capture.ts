/**
 * Everything a process could print while a scenario runs: a Nest `LoggerService` that keeps every level
 * (debug and verbose too), the `console` methods and raw `process.stdout` / `process.stderr` writes.
 * Objects are kept as `util.inspect` sees them, so a secret inside a logged object is found as well.
 */
import { inspect } from 'node:util';
import type { LoggerService } from '@nestjs/common';

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

export interface OutputCapture {
  readonly logger: LoggerService;
  /** One entry per logger call, console call or stream write. */
  readonly lines: string[];
  start(): void;
  stop(): void;
}

function text(parts: readonly unknown[]): string {
  return parts.map((part) => (typeof part === 'string' ? part : inspect(part, { depth: 8 }))).join(' ');
}

export function captureOutput(): OutputCapture {
  const lines: string[] = [];
  const keep =
    (level: string) =>
    (...parts: unknown[]): void => {
      lines.push(`${level} ${text(parts)}`);
    };
  const logger: LoggerService = {
    log: keep('log'),
    error: keep('error'),
    warn: keep('warn'),
    debug: keep('debug'),
    verbose: keep('verbose'),
    fatal: keep('fatal'),
  };
  const restore: Array<() => void> = [];
  return {
    logger,
    lines,
    start() {
      /* eslint-disable no-console -- capturing console output is the point */
      for (const method of CONSOLE_METHODS) {
        const original = console[method];
        console[method] = keep(`console.${method}`);
        restore.push(() => (console[method] = original));
      }
      /* eslint-enable no-console */
      for (const stream of [process.stdout, process.stderr]) {
        const original = stream.write;
        stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
          lines.push(`stream ${typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')}`);
          return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
        } as typeof stream.write;
        restore.push(() => (stream.write = original));
      }
    },
    stop() {
      for (const undo of restore.splice(0).reverse()) undo();
    },
  };
}
