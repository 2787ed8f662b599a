/**
 * Example: hooks as a Nest provider. Mount `AgentHooksModule` and add `@OnHook` methods to any provider.
 * Run by test/unit/examples.spec.ts.
 */
import { Injectable, Logger, Module } from '@nestjs/common';
import {
  AgentHooksModule,
  HookInvocation,
  OnHook,
  ToolCallContext,
  ToolResultContext,
  type AfterToolCallEvent,
  type BeforeToolCallEvent,
  type HookDecision,
} from '../../src/index.js';

const MAX_RESULT_CHARS = 8_000;

@Injectable()
export class AuditHooks {
  private readonly logger = new Logger('Audit');
  readonly audited: string[] = [];

  /** Engine family: safe metadata only, and a logging failure must not block the user (warn). */
  @OnHook('after_tool_call', { failurePolicy: 'warn' })
  auditToolCall(invocation: HookInvocation): void {
    const call = invocation.payloadAs(ToolCallContext);
    this.audited.push(`${call.toolName} ${call.status} ${call.latencyMs}ms`);
    this.logger.log(`tool=${call.toolName} status=${call.status} latencyMs=${call.latencyMs}`);
  }

  /** Engine family: cap results before the model sees them (must return a ToolResultContext). */
  @OnHook('transform_tool_result')
  trimResult(invocation: HookInvocation): ToolResultContext {
    const result = invocation.payloadAs(ToolResultContext);
    if (result.result.length <= MAX_RESULT_CHARS) return result;
    return result.withResult(`${result.result.slice(0, MAX_RESULT_CHARS)}\n… [truncated]`);
  }

  /** Agent family, in-process control: deny deletes, fail closed if this policy itself breaks. */
  @OnHook('beforeToolCall', { matcher: '^fs/delete', onError: 'block' })
  denyDeletes(_event: BeforeToolCallEvent): HookDecision {
    return { decision: 'deny', reason: 'Deleting files is not allowed here.' };
  }

  /** Agent family: a test double for the clock tool. */
  @OnHook('beforeToolCall', { matcher: '^clock/now$' })
  mockClock(event: BeforeToolCallEvent): void {
    event.mock({ content: '2026-01-01T00:00:00Z', success: true });
  }

  /** Agent family: observe every tool result (handlers see the full result, never logged here). */
  @OnHook('afterToolCall')
  countResults(event: AfterToolCallEvent): void {
    this.audited.push(`${event.identifier}/${event.apiName} mocked=${event.mocked}`);
  }
}

@Module({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [AuditHooks] })
export class ExampleAppModule {}
