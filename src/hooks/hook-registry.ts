/**
 * Holds app hooks (config entries, decorators) and per-operation caller hooks, pre-indexed by point so a
 * point without hooks is answered by one map lookup (E3). No static state: one registry per app.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AgentHook } from './agent-hook.js';
import { HookConfigurationError } from './hook-errors.js';
import { HOOK_POINTS, isControlPoint, isHookPoint, type HookPoint } from './hook-points.js';
import { CALLER_HOOK_VALIDATOR, type CallerHookValidator } from './hook-ports.js';
import { MAX_IDENTIFIER_LENGTH } from './input-limits.js';
import { compileMatcher } from './matcher.js';
import { PatternBudget } from './pattern-budget.js';
import { matcherScopeProblem } from './matcher-scope.js';
import type { HookHandlerFn, RegisteredHook } from './registered-hook.js';

const NONE: readonly RegisteredHook[] = Object.freeze([]);

@Injectable()
export class HookRegistry {
  private readonly app = new Map<HookPoint, RegisteredHook[]>();
  private readonly callers = new Map<string, Map<HookPoint, RegisteredHook[]>>();

  constructor(@Optional() @Inject(CALLER_HOOK_VALIDATOR) private readonly validator?: CallerHookValidator) {}

  /** Adds app hooks; within a point they stay sorted by `order`, ties in registration order. */
  addAppHooks(hooks: readonly RegisteredHook[]): void {
    for (const hook of hooks) {
      const list = this.app.get(hook.point) ?? [];
      // Insert after every hook with order <= this one: a stable insertion.
      let at = list.length;
      while (at > 0 && list[at - 1]!.order > hook.order) at--;
      list.splice(at, 0, hook);
      this.app.set(hook.point, list);
    }
  }

  appHooks(point: HookPoint): readonly RegisteredHook[] {
    return this.app.get(point) ?? NONE;
  }

  /**
   * Registers one operation's caller hooks, appended in order (A1). The whole batch is validated first:
   * on any error nothing changes.
   */
  register(operationId: string, hooks: readonly AgentHook[]): readonly RegisteredHook[] {
    if (typeof operationId !== 'string' || operationId.length === 0) {
      throw new HookConfigurationError('register: operationId must be a non-empty string');
    }
    if (!Array.isArray(hooks)) throw new HookConfigurationError('register: hooks must be an array');
    chargeMatchers(hooks);
    const normalized = hooks.map((hook, index) => this.normalizeCallerHook(hook, index));
    if (normalized.length === 0) return normalized;
    const byPoint = this.callers.get(operationId) ?? new Map<HookPoint, RegisteredHook[]>();
    for (const hook of normalized) {
      const list = byPoint.get(hook.point);
      if (list) list.push(hook);
      else byPoint.set(hook.point, [hook]);
    }
    this.callers.set(operationId, byPoint);
    return normalized;
  }

  /** Removes everything registered for the operation (A4). */
  unregister(operationId: string): void {
    this.callers.delete(operationId);
  }

  callerHooks(operationId: string | undefined, point: HookPoint): readonly RegisteredHook[] {
    if (operationId === undefined) return NONE;
    return this.callers.get(operationId)?.get(point) ?? NONE;
  }

  hasCallerHooks(operationId: string): boolean {
    return this.callers.has(operationId);
  }

  /** How many operations have caller hooks registered (for leak checks). */
  get operationCount(): number {
    return this.callers.size;
  }

  private normalizeCallerHook(hook: AgentHook, index: number): RegisteredHook {
    const named = typeof hook?.id === 'string' && hook.id.length <= MAX_IDENTIFIER_LENGTH;
    const where = `hooks[${index}]${named ? ` (${hook.id})` : ''}`;
    if (hook === null || typeof hook !== 'object') throw new HookConfigurationError(`${where}: must be an object`);
    if (typeof hook.id !== 'string' || hook.id.trim().length === 0) {
      throw new HookConfigurationError(`${where}: id must be a non-empty string`);
    }
    // G6: hook ids are stored in varchar(255) columns; PostgreSQL would refuse a longer one mid-operation.
    if (hook.id.length > MAX_IDENTIFIER_LENGTH) throw new HookConfigurationError(`${where}: id must be at most ${MAX_IDENTIFIER_LENGTH} characters`);
    if (!isHookPoint(hook.type) || HOOK_POINTS[hook.type].family !== 'agent') {
      throw new HookConfigurationError(`${where}: unknown type ${JSON.stringify(hook.type)}; caller hooks take an agent-family point`);
    }
    const hasHandler = hook.handler !== undefined;
    if (hasHandler && typeof hook.handler !== 'function') throw new HookConfigurationError(`${where}: handler must be a function`);
    if (hook.webhook !== undefined && (hook.webhook === null || typeof hook.webhook !== 'object')) {
      throw new HookConfigurationError(`${where}: webhook must be an object`);
    }
    if (!hasHandler && !hook.webhook) throw new HookConfigurationError(`${where}: needs a handler or a webhook`);
    if (hook.onError !== undefined && hook.onError !== 'continue' && hook.onError !== 'block') {
      throw new HookConfigurationError(`${where}: onError must be 'continue' or 'block'`);
    }
    if (hook.onError !== undefined && !isControlPoint(hook.type)) {
      throw new HookConfigurationError(`${where}: onError applies to beforeToolCall/afterToolCall, beforeModelCall/afterModelCall controls only, not ${hook.type}`);
    }
    if (hook.timeoutMs !== undefined && !(Number.isFinite(hook.timeoutMs) && hook.timeoutMs > 0)) {
      throw new HookConfigurationError(`${where}: timeoutMs must be a positive number`);
    }
    const scope = matcherScopeProblem(hook.type, hook.matcher);
    if (scope) throw new HookConfigurationError(`${where}: matcher: ${scope}`);
    const matcher = compileMatcher(hook.matcher, where);
    let webhook = hook.webhook;
    if (this.validator) webhook = this.validator.validate(hook, index) ?? webhook;
    else if (webhook && (typeof webhook.url !== 'string' || webhook.url.length === 0)) {
      throw new HookConfigurationError(`${where}: webhook.url must be a non-empty string`);
    }
    return Object.freeze({
      id: hook.id,
      point: hook.type,
      source: 'caller' as const,
      ...(matcher ? { matcher } : {}),
      failurePolicy: 'fail' as const,
      // Local dispatch runs the handler when there is one (W2): then only the hook-level onError applies.
      onError: (hasHandler ? hook.onError : (hook.onError ?? webhook?.onError)) ?? 'continue',
      control: hasHandler && hook.onError !== undefined,
      ...(hook.timeoutMs !== undefined ? { timeoutMs: hook.timeoutMs } : {}),
      order: 0,
      ...(hasHandler ? { handler: hook.handler as HookHandlerFn } : {}),
      ...(webhook ? { webhook: Object.freeze({ ...webhook }) } : {}),
    });
  }
}

/**
 * G6: one operation's matchers share one compiled-size budget, checked from their text before any is
 * compiled, so a batch of large patterns costs nothing but this scan.
 */
function chargeMatchers(hooks: readonly AgentHook[]): void {
  const budget = new PatternBudget();
  hooks.forEach((hook, index) => {
    const matcher = (hook as Partial<AgentHook> | null)?.matcher;
    if (typeof matcher !== 'string') return;
    const problem = budget.charge(matcher);
    if (problem !== undefined) throw new HookConfigurationError(`hooks[${index}]: matcher: ${problem}`);
  });
}
