/**
 * The enterprise knowledge assistant's one hook plugin (SPEC X), registered in ../../agents.yaml and
 * resolved through ../plugins.toml. One instance serves every point and every run (E7): nothing here
 * keeps per-request state, and secrets are read from the environment at the moment they are used (S2).
 * In your own project, import these types from 'nest-agent-hooks'.
 */
import { Logger } from '@nestjs/common';
import type { EngineContext, HookInvocation, McpRequestContext, ToolCallContext, ToolResultContext } from '../../../../src/index.js';

/** Results longer than this reach the model (and the conversation) cut to this many characters. */
export const MAX_RESULT_CHARS = 8_000;
export const TRUNCATION_SUFFIX = '\n… [truncated]';
const REQUIRED_ENV = ['ANTHROPIC_API_KEY', 'CONTEXT7_API_KEY'] as const;

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
