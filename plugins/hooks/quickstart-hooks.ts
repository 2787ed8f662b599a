/**
 * The quickstart's hook plugin (registered in config/agents.yaml, resolved through plugins/plugins.toml):
 * an audit of every tool call (safe metadata only) and an in-process policy over the clock tools — reading
 * the clock is allowed, changing it is denied. `agentctl run assistant "What time is it?"` shows the allow,
 * `agentctl run timekeeper "noon"` the denial, in the hook timeline.
 * In your own project, import these types from 'nest-agent-hooks'.
 */
import { Logger } from '@nestjs/common';
import type { BeforeToolCallEvent, HookDecision, HookInvocation, ToolCallContext } from '../../src/index.js';

export class QuickstartHooks {
  private readonly logger = new Logger('Audit');

  /** after_tool_call, failure_policy: warn — an audit failure must not block the user. */
  auditToolCall(invocation: HookInvocation): void {
    const call = invocation.payload as ToolCallContext;
    this.logger.log(`tool=${call.toolName} provider=${call.provider} status=${call.status} latencyMs=${call.latencyMs.toFixed(1)}`);
  }

  /**
   * beforeToolCall on ^clock/, onError: block — a policy fails closed. An explicit allow for `clock/now`
   * (recorded as `allowed`; later controls are still asked), a deny for anything that would change the clock.
   */
  clockPolicy(event: BeforeToolCallEvent): HookDecision {
    if (event.apiName === 'now') return { decision: 'allow' };
    return { decision: 'deny', reason: `Changing the clock (${event.identifier}/${event.apiName}) is not allowed.` };
  }
}
