/**
 * The enterprise knowledge assistant's one hook plugin (SPEC X), registered in ../../agents.yaml and
 * resolved through ../plugins.toml. One instance serves every point and every run (E7): nothing here
 * keeps per-request state, and secrets are read from the environment at the moment they are used (S2).
 * In your own project, import these types from 'nest-agent-hooks'.
 */
import { Logger } from '@nestjs/common';
import type {
  EngineContext,
  HookInvocation,
  McpRequestContext,
  ModelCallMessage,
  ModelRequestContext,
  ToolCallContext,
  ToolResultContext,
} from '../../../../src/index.js';

/** Results longer than this reach the model (and the conversation) cut to this many characters. */
export const MAX_RESULT_CHARS = 8_000;
export const TRUNCATION_SUFFIX = '\n… [truncated]';
const REQUIRED_ENV = ['ANTHROPIC_API_KEY', 'CONTEXT7_API_KEY'] as const;

/**
 * Personal data that must not leave for the model provider, each with the placeholder the model sees
 * instead (extend the list for your own locales and identifiers). Card numbers count only when their
 * Luhn check digit is right, so order ids and millisecond timestamps stay; phone numbers need separators,
 * so dates (2026-11-30) and times stay.
 */
export const PII_RULES: readonly { pattern: RegExp; placeholder: string; accept?: (match: string) => boolean }[] = [
  { pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, placeholder: '[email]' },
  { pattern: /\b\d(?:[ -]?\d){12,18}\b/g, placeholder: '[card number]', accept: luhnValid },
  { pattern: /(?:\+\d{1,3}[ .-]?)?\(?\b\d{2,4}\)?[ .-]\d{3,4}[ .-]\d{3,4}\b/g, placeholder: '[phone]' },
];

export function redactPii(text: string): string {
  return PII_RULES.reduce((redacted, { pattern, placeholder, accept }) => redacted.replace(pattern, (match) => (accept && !accept(match) ? match : placeholder)), text);
}

function luhnValid(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Every string inside a tool call's arguments, redacted; numbers, booleans and keys as they are. */
function redactArgs(value: unknown): unknown {
  if (typeof value === 'string') return redactPii(value);
  if (Array.isArray(value)) return value.map(redactArgs);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactArgs(inner)]));
  return value;
}

export class ResearchHooksHook {
  private readonly logger = new Logger('ResearchHooks');

  /** on_engine_start (fail): refuse to start without the keys, naming the variables, never their values. */
  validate_environment(invocation: HookInvocation): void {
    const engine = invocation.payload as EngineContext;
    const missing = REQUIRED_ENV.filter((name) => !process.env[name]);
    if (missing.length > 0) throw new Error(`${engine.systemName} cannot start: set ${missing.join(' and ')}`);
  }

  /**
   * before_mcp_request (fail): the bearer token for the `context7` server only; `deepwiki` is public and
   * must never receive it. Read at call time, so a rotated key is used on the next request.
   */
  inject_context7_auth(invocation: HookInvocation): McpRequestContext | undefined {
    const request = invocation.payload as McpRequestContext;
    if (request.serverId !== 'context7') return undefined;
    const key = process.env.CONTEXT7_API_KEY;
    // Fail closed (S4): an unauthenticated request would only earn a 401 and hide the real cause.
    if (!key) throw new Error('CONTEXT7_API_KEY is not set');
    return request.withHeaders({ Authorization: `Bearer ${key}` });
  }

  /**
   * before_model_request (fail): e-mail addresses, card and phone numbers never reach the model provider —
   * in the prompt, in earlier answers, in tool results, or in the arguments of earlier tool calls. The
   * conversation itself keeps them (it is the user's); only the request that leaves is redacted. Under
   * `fail` a redaction that throws stops the call instead of sending the prompt unredacted.
   */
  redact_pii(invocation: HookInvocation): ModelRequestContext {
    const request = invocation.payload as ModelRequestContext;
    const messages = request.messages.map(
      (message): ModelCallMessage => ({
        ...message,
        content: redactPii(message.content),
        ...(message.toolCalls ? { toolCalls: message.toolCalls.map((call) => ({ ...call, args: redactArgs(call.args) as Record<string, unknown> })) } : {}),
      }),
    );
    return request.withMessages(messages);
  }

  /** after_tool_call (warn): safe metadata only — no arguments, no result (E9, S1). */
  audit_tool_call(invocation: HookInvocation): void {
    const call = invocation.payload as ToolCallContext;
    const error = call.error ? ` error=${call.error.type}` : '';
    this.logger.log(`tool=${call.toolName} provider=${call.provider} status=${call.status} latencyMs=${call.latencyMs.toFixed(1)}${error}`);
  }

  /** transform_tool_result: long results are cut so they fit the model's context; must return the context. */
  trim_result(invocation: HookInvocation): ToolResultContext {
    const result = invocation.payload as ToolResultContext;
    if (result.result.length <= MAX_RESULT_CHARS) return result;
    return result.withResult(result.result.slice(0, MAX_RESULT_CHARS) + TRUNCATION_SUFFIX);
  }

  /** on_run_error: the error's type only — its message may hold user input (S3). */
  on_run_error(invocation: HookInvocation): void {
    const error = invocation.payload;
    const type = error instanceof Error ? error.name : typeof error;
    const runId = invocation.runContext?.runId;
    this.logger.warn(`run failed${runId ? ` run=${runId}` : ''} type=${type}`);
  }
}
