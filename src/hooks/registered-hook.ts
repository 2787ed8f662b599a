/** The dispatcher's normalized view of a hook, whatever its source. */
import type { AgentHookWebhook, FailurePolicy, OnErrorPolicy } from './agent-hook.js';
import type { HookPoint } from './hook-points.js';
import type { ToolMatcher } from './matcher.js';

/** Where a hook came from; also its place in the order (app → caller → environment, DESIGN §3, L3). */
export type HookSource = 'config' | 'decorator' | 'caller' | 'environment';

/**
 * An in-process handler. Agent-family handlers get the event; engine-family handlers get a
 * `HookInvocation`. The dispatcher passes the right argument.
 */
export type HookHandlerFn = (arg: never) => unknown;

export interface RegisteredHook {
  readonly id: string;
  readonly point: HookPoint;
  readonly source: HookSource;
  readonly matcher?: ToolMatcher;
  /** Engine family (E6); default `fail`. */
  readonly failurePolicy: FailurePolicy;
  /** Agent-family controls (W12); default `continue`. */
  readonly onError: OnErrorPolicy;
  /**
   * An in-process handler registered explicitly as a control (`onError` given). Controls are never
   * skipped by a mock: policy beats test doubles (DESIGN §3).
   */
  readonly control: boolean;
  readonly timeoutMs?: number;
  /** Sort key among app hooks; ties keep registration order. */
  readonly order: number;
  readonly handler?: HookHandlerFn;
  readonly webhook?: AgentHookWebhook;
  /** For `HookInvocation` and messages: who declared the hook. */
  readonly plugin?: string;
  readonly method?: string;
  readonly ref?: string;
}
