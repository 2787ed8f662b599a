/**
 * DESIGN §7 errors: one shape, the right status, the field named; nothing unknown leaks (a 500 says only
 * "internal server error").
 */
import { BadRequestException, HttpException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { CriticalHookDeliveryError, HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { AlreadyCompletedError, InterventionNotPendingError, OperationCompletedError, RuntimeShuttingDownError, UnknownAgentError, UnknownInterventionError, UnknownOperationError } from '../../../src/runtime/runtime-errors.js';
import { ApiError } from '../../../src/server/api/api-error.js';
import { toErrorResponse } from '../../../src/server/api/api-error-response.js';
import { callerEnvAllowlistFromEnvironment } from '../../../src/server/api/caller-env-allowlist.js';
import { checkCallerHooks } from '../../../src/server/api/caller-hook-policy.js';
import { createOperationBody, interventionBody } from '../../../src/server/api/request-bodies.js';
import { parseRequest } from '../../../src/server/api/request-validation.js';

const errorOf = (work: () => unknown): ApiError => {
  try {
    work();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('expected an error');
};

describe('DESIGN §7 error responses', () => {
  it.each([
    [new UnknownAgentError('ghost'), 404, 'unknown_agent'],
    [new UnknownOperationError('op'), 404, 'not_found'],
    [new UnknownInterventionError('op', 'call', 'approval'), 404, 'not_found'],
    [new InterventionNotPendingError('op', 'call'), 409, 'not_pending'],
    [new AlreadyCompletedError('op', 'call'), 409, 'already_completed'],
    [new OperationCompletedError('op', 'call'), 409, 'operation_completed'],
    [new RuntimeShuttingDownError(), 503, 'shutting_down'],
    [new HookConfigurationError('hooks[0] (a): webhook.url: must be an absolute http(s) URL'), 400, 'invalid_request'],
    [new CriticalHookDeliveryError([]), 424, 'hook_delivery_failed'],
    [new ApiError(401, 'unauthorized', 'no key', { 'WWW-Authenticate': 'Bearer' }), 401, 'unauthorized'],
    [new NotFoundException('Cannot GET /x'), 404, 'not_found'],
    [new PayloadTooLargeException(), 413, 'payload_too_large'],
  ])('%p → %i %s', (error, status, code) => {
    expect(toErrorResponse(error)).toMatchObject({ status, code });
  });

  it('malformed JSON is invalid_json without quoting the body', () => {
    const parseError = new SyntaxError('Unexpected token s in JSON at position 12: "sekrit"');
    const response = toErrorResponse(new BadRequestException(parseError.message, { cause: parseError }));
    expect(response).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(response.message).not.toContain('sekrit');
  });

  it('anything unknown (and any 5xx HttpException) is a 500 with a fixed message', () => {
    expect(toErrorResponse(new Error('password=hunter2'))).toEqual({ status: 500, code: 'internal', message: 'internal server error', headers: {} });
    expect(toErrorResponse(new HttpException('db at postgres://u:p@h', 503)).message).toBe('internal server error');
    expect(toErrorResponse('a string').status).toBe(500);
  });
});

describe('DESIGN §7 bodies: 400 naming the field', () => {
  it('names every missing or wrong field, and unknown ones', () => {
    const error = errorOf(() => parseRequest(createOperationBody, { prompt: 3, extra: true }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(error.message).toBe('agentId: Required; prompt: Invalid input: expected string, received number; extra: is not allowed');
  });

  it('names nested fields with their index, and says caller hooks are webhook-only', () => {
    const error = errorOf(() => parseRequest(createOperationBody, { agentId: 'a', prompt: 'p', hooks: [{ id: 'h', type: 'beforeStep', webhook: { url: 'https://x' }, handler: 'f' }, { id: 'h2', type: 'beforeStep' }] }));
    expect(error.message).toContain('hooks[0].handler: is not accepted over HTTP (caller hooks are webhook-only)');
    expect(error.message).toContain('hooks[1].webhook: Required');
  });

  it('a missing body is "body: Required"; a missing enum value is Required too', () => {
    expect(errorOf(() => parseRequest(createOperationBody, undefined)).message).toBe('body: Required');
    expect(errorOf(() => parseRequest(interventionBody, {})).message).toBe('action: Required');
  });

  it('refuses NUL characters (PostgreSQL text cannot hold them)', () => {
    expect(errorOf(() => parseRequest(createOperationBody, { agentId: 'a', prompt: 'x\u0000y' })).message).toBe('prompt: must not contain NUL characters');
  });

  it('keeps the caller webhook object itself for the runtime to validate (W4)', () => {
    const webhook = { url: 'https://example.com/h', timeout: 5 };
    const parsed = parseRequest(createOperationBody, { agentId: 'a', prompt: 'p', hooks: [{ id: 'h', type: 'afterToolCall', webhook }] });
    expect(parsed.hooks?.[0]?.webhook).toBe(webhook);
  });
});

describe('S2 / B3 caller hook policy over HTTP', () => {
  const hooks = (webhook: Record<string, unknown>) => [{ webhook: { url: 'https://example.com', ...webhook } }];

  it('allowedEnvVars must be on the operator allow-list (empty by default)', () => {
    const none = callerEnvAllowlistFromEnvironment({});
    expect(errorOf(() => checkCallerHooks(hooks({ allowedEnvVars: ['DATABASE_URL'] }), none)).message).toContain('hooks[0].webhook.allowedEnvVars[0]: DATABASE_URL is not in the server');
    const some = callerEnvAllowlistFromEnvironment({ AGENT_HOOKS_CALLER_ENV_ALLOWLIST: 'HOOK_TOKEN, TEAM_ID' });
    expect(() => checkCallerHooks(hooks({ allowedEnvVars: ['HOOK_TOKEN', 'TEAM_ID'] }), some)).not.toThrow();
    expect(errorOf(() => checkCallerHooks(hooks({ allowedEnvVars: ['HOOK_TOKEN', 'PGPASSWORD'] }), some)).message).toContain('allowedEnvVars[1]');
  });

  it('an allow-list entry that is not a variable name stops the start', () => {
    expect(() => callerEnvAllowlistFromEnvironment({ AGENT_HOOKS_CALLER_ENV_ALLOWLIST: 'OK,not-a-name' })).toThrow('AGENT_HOOKS_CALLER_ENV_ALLOWLIST entry 2');
  });

  it('a webhook body may not name a user (B3)', () => {
    for (const key of ['userId', 'userEmail']) {
      expect(errorOf(() => checkCallerHooks(hooks({ body: { [key]: 'victim' } }), new Set())).message).toContain(`hooks[0].webhook.body.${key}`);
    }
  });
});
