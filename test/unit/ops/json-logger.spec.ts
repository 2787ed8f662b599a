/**
 * The server's JSON logger (pino behind Nest's LoggerService): one object per line with level, time, context
 * and msg; the request id on lines logged inside a request; errors by type and stack; secret keys redacted (S1).
 */
import { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { JsonLogger } from '../../../src/server/ops/json-logger.js';
import { pause } from '../../support/eventually.js';

function capture(level = 'trace'): { logger: JsonLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = new JsonLogger({ level, destination });
  return { logger, lines: () => chunks.join('').trimEnd().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('JsonLogger', () => {
  it('writes Nest calls as JSON lines: level label, ISO time, context, msg', () => {
    const { logger, lines } = capture();
    logger.log('listening on http://127.0.0.1:3000 (pid 1)', 'Server');
    logger.warn('careful', 'Retention');
    logger.verbose('details');
    const [info, warn, trace] = lines();
    expect(info).toMatchObject({ level: 'info', context: 'Server', msg: 'listening on http://127.0.0.1:3000 (pid 1)' });
    expect(new Date(info!.time as string).toISOString()).toBe(info!.time);
    expect(warn).toMatchObject({ level: 'warn', context: 'Retention', msg: 'careful' });
    expect(trace).toMatchObject({ level: 'trace', msg: 'details' });
    expect(trace).not.toHaveProperty('context');
  });

  it('the listening line still matches /listening on (http:\\/\\/\\S+)/ with exactly the URL', () => {
    const { logger, lines } = capture();
    logger.log('listening on http://127.0.0.1:41234 (pid 7)', 'Server');
    const raw = JSON.stringify(lines()[0]);
    expect(/listening on (http:\/\/[^\s]+)/.exec(raw)?.[1]).toBe('http://127.0.0.1:41234');
  });

  it('puts the request id on every line logged inside withRequest, also after an await', async () => {
    const { logger, lines } = capture();
    await logger.withRequest('req-1', async () => {
      logger.log('before', 'Api');
      await pause(1, 'an await that leaves the synchronous context');
      logger.log('after', 'Api');
    });
    logger.log('outside', 'Api');
    expect(lines().map((line) => [line.msg, line.requestId])).toEqual([
      ['before', 'req-1'],
      ['after', 'req-1'],
      ['outside', undefined],
    ]);
  });

  it('structured lines keep their fields; an Error is logged by type, code and stack; a Nest (message, stack, context) call too', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'GET /x 200 1ms', route: '/x', status: 200 }, 'Http');
    const error = Object.assign(new TypeError('bad thing'), { code: 'E_BAD' });
    logger.error(error, undefined, 'ExceptionHandler');
    logger.error('failed', 'Error: failed\n    at somewhere', 'Runtime');
    const [structured, thrown, nest] = lines();
    expect(structured).toMatchObject({ msg: 'GET /x 200 1ms', route: '/x', status: 200, context: 'Http' });
    expect(thrown).toMatchObject({ level: 'error', context: 'ExceptionHandler', msg: 'bad thing', err: { type: 'TypeError', code: 'E_BAD' } });
    expect((thrown!.err as { stack: string }).stack).toContain('TypeError: bad thing');
    expect(nest).toMatchObject({ level: 'error', context: 'Runtime', msg: 'failed', err: { stack: 'Error: failed\n    at somewhere' } });
  });

  it('S1: redacts authorization, cookie, token, apiKey, password and secret keys of logged objects', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'x', authorization: 'Bearer sk-live-1', headers: { authorization: 'Bearer sk-live-2', cookie: 'c=1' }, token: 't', nested: { apiKey: 'k', password: 'p', secret: 's' } }, 'Http');
    const line = JSON.stringify(lines()[0]);
    for (const secret of ['sk-live-1', 'sk-live-2', 'c=1', '"t"', '"k"', '"p"', '"s"']) expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
  });

  it('S1: a flat line with one secret key at the top is redacted too; a flat line without one is written as it is', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'x', route: '/v1/operations', status: 201, token: 'sk-live-3' }, 'Http');
    logger.log({ msg: 'GET /v1/operations/:id 200 1.2ms', requestId: 'r-1', method: 'GET', route: '/v1/operations/:id', status: 200, latencyMs: 1.2 }, 'Http');
    const [secret, plain] = lines();
    expect(JSON.stringify(secret)).not.toContain('sk-live-3');
    expect(secret).toMatchObject({ token: '[redacted]', status: 201 });
    expect(plain).toMatchObject({ level: 'info', context: 'Http', msg: 'GET /v1/operations/:id 200 1.2ms', requestId: 'r-1', method: 'GET', route: '/v1/operations/:id', status: 200, latencyMs: 1.2 });
  });

  it('levels: below the configured level nothing is written; setLogLevels takes the lowest Nest level given', () => {
    const { logger, lines } = capture('warn');
    logger.log('hidden');
    logger.debug('hidden');
    logger.warn('shown');
    logger.setLogLevels(['log', 'error']);
    logger.log('now shown');
    expect(lines().map((line) => line.msg)).toEqual(['shown', 'now shown']);
  });

  it("is usable as Nest's logger: a static Logger writes through it", () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(logger);
    try {
      new Logger('Static').log('hello');
    } finally {
      Logger.overrideLogger(true);
    }
    expect(lines()[0]).toMatchObject({ context: 'Static', msg: 'hello' });
  });
});
