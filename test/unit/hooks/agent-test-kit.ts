/**
 * Shared fixtures for the agent-family dispatcher specs: event builders, recording implementations of the
 * hooks room's ports (webhook delivery, environment hooks, outcome sink) and a real Nest testing module.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Logger, type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentHooksModule,
  HookDispatcher,
  HookRegistry,
  type AfterStepEvent,
  type AfterToolCallEvent,
  type AgentHookWebhook,
  type BeforeToolCallObservationEvent,
  type HookOutcomeRecord,
  type HookPoint,
  type ToolResult,
} from '../../../src/index.js';
import {
  CALLER_HOOK_VALIDATOR,
  ENVIRONMENT_HOOK_SOURCE,
  HOOK_OUTCOME_SINK,
  WEBHOOK_DELIVERY,
  type EnvironmentHookSource,
  type HookOutcomeSink,
  type WebhookDeliveryPort,
  type WebhookRequest,
} from '../../../src/hooks/hook-ports.js';
import { compileMatcher } from '../../../src/hooks/matcher.js';
import type { RegisteredHook } from '../../../src/hooks/registered-hook.js';

let eventSeq = 0;

export function beforeEvent(overrides: Partial<BeforeToolCallObservationEvent> = {}): BeforeToolCallObservationEvent {
  eventSeq += 1;
  return {
    id: `evt-${eventSeq}`,
    type: 'beforeToolCall',
    operationId: 'op-1',
    agentId: 'assistant',
    userId: 'user-1',
    stepIndex: 0,
    timestamp: new Date(0).toISOString(),
    toolCallId: `call-${eventSeq}`,
    assistantMessageId: 'msg-1',
    identifier: 'fs',
    apiName: 'readFile',
    args: { path: '/etc/hosts' },
    callIndex: 0,
    executor: 'server',
    ...overrides,
  };
}

export const ORIGINAL_RESULT: ToolResult = Object.freeze({ content: 'ORIGINAL SECRET OUTPUT', success: true }) as ToolResult;

export function afterEvent(overrides: Partial<AfterToolCallEvent> = {}): AfterToolCallEvent {
  eventSeq += 1;
  return {
    id: `evt-${eventSeq}`,
    type: 'afterToolCall',
    operationId: 'op-1',
    agentId: 'assistant',
    userId: 'user-1',
    stepIndex: 0,
    timestamp: new Date(0).toISOString(),
    toolCallId: `call-${eventSeq}`,
    assistantMessageId: 'msg-1',
    identifier: 'fs',
    apiName: 'readFile',
    args: { path: '/etc/hosts' },
    callIndex: 0,
    executor: 'server',
    result: { ...ORIGINAL_RESULT },
    mocked: false,
    ...overrides,
  };
}

export function stepEvent(operationId = 'op-1', stepIndex = 0): AfterStepEvent {
  eventSeq += 1;
  return {
    id: `evt-${eventSeq}`,
    type: 'afterStep',
    operationId,
    agentId: 'assistant',
    stepIndex,
    timestamp: new Date(0).toISOString(),
    content: '',
    toolCalls: [],
    toolResults: [],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  };
}

/** An error as the webhook delivery port throws it: with a string `code`. */
export function deliveryError(code: string, message = `delivery failed: ${code}`): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

type ControlBehaviour = (request: WebhookRequest) => unknown;
type NotifyBehaviour = (request: WebhookRequest) => void | Promise<void>;

/** A `WebhookDeliveryPort` that records every call; behaviour is set per hook id. */
export class RecordingDelivery implements WebhookDeliveryPort {
  readonly notified: WebhookRequest[] = [];
  readonly controlled: WebhookRequest[] = [];
  readonly calls: string[] = [];
  private readonly notifyBehaviour = new Map<string, NotifyBehaviour>();
  private readonly controlBehaviour = new Map<string, ControlBehaviour>();

  onNotify(hookId: string, behaviour: NotifyBehaviour): this {
    this.notifyBehaviour.set(hookId, behaviour);
    return this;
  }

  onControl(hookId: string, behaviour: ControlBehaviour): this {
    this.controlBehaviour.set(hookId, behaviour);
    return this;
  }

  async notify(request: WebhookRequest): Promise<void> {
    this.notified.push(request);
    this.calls.push(`notify:${request.hook.id}`);
    await this.notifyBehaviour.get(request.hook.id)?.(request);
  }

  async control(request: WebhookRequest): Promise<unknown> {
    this.controlled.push(request);
    this.calls.push(`control:${request.hook.id}`);
    const behaviour = this.controlBehaviour.get(request.hook.id);
    return behaviour ? await behaviour(request) : undefined;
  }
}

/** A `HookOutcomeSink` that keeps every record. */
export class RecordingSink implements HookOutcomeSink {
  readonly records: HookOutcomeRecord[] = [];
  record(outcome: HookOutcomeRecord): void {
    this.records.push(outcome);
  }
  forHook(hookId: string): HookOutcomeRecord[] {
    return this.records.filter((r) => r.hookId === hookId);
  }
}

/** The current environment's hooks, re-read at every dispatch (L1); tests mutate `hooks`. */
export class TestEnvironment implements EnvironmentHookSource {
  hooks: RegisteredHook[] = [];
  reads = 0;
  hooksFor(point: HookPoint): readonly RegisteredHook[] {
    this.reads += 1;
    return this.hooks.filter((hook) => hook.point === point);
  }
}

/** A RegisteredHook as an environment source would build it (source `environment`). */
export function envHook(
  init: { id: string; point: HookPoint; handler?: (event: never) => unknown; webhook?: AgentHookWebhook; matcher?: string; onError?: 'continue' | 'block' },
): RegisteredHook {
  const matcher = compileMatcher(init.matcher, `env ${init.id}`);
  return Object.freeze({
    id: init.id,
    point: init.point,
    source: 'environment' as const,
    ...(matcher ? { matcher } : {}),
    failurePolicy: 'fail' as const,
    onError: init.onError ?? init.webhook?.onError ?? 'continue',
    control: init.handler !== undefined && init.onError !== undefined,
    order: 0,
    ...(init.handler ? { handler: init.handler } : {}),
    ...(init.webhook ? { webhook: Object.freeze({ ...init.webhook }) } : {}),
  });
}

export interface BootOptions {
  providers?: Provider[];
  imports?: Array<Type<unknown> | DynamicModule>;
  delivery?: WebhookDeliveryPort;
  environment?: EnvironmentHookSource;
  sink?: HookOutcomeSink;
}

export interface Booted {
  moduleRef: TestingModule;
  dispatcher: HookDispatcher;
  registry: HookRegistry;
}

/**
 * A real Nest testing module with `AgentHooksModule.forRoot({ configFile: false })` and the given ports, isolating the hooks
 * core from the webhooks room: the module's own delivery, environment source and caller-hook validator are
 * overridden (with the test's port, or with none), the way a host app overrides providers in its tests.
 *
 * `boot` checks the wiring.
 */
export async function boot(options: BootOptions = {}): Promise<Booted> {
  const ports: Array<{ provide: symbol; useValue: unknown }> = [];
  if (options.sink) ports.push({ provide: HOOK_OUTCOME_SINK, useValue: options.sink });
  class TestPortsModule {}
  const portsModule: DynamicModule = { module: TestPortsModule, global: true, providers: ports, exports: ports.map((p) => p.provide) };
  const moduleRef = await Test.createTestingModule({
    imports: [portsModule, AgentHooksModule.forRoot({ configFile: false }), ...(options.imports ?? [])],
    providers: [...(options.providers ?? [])],
  })
    .overrideProvider(WEBHOOK_DELIVERY)
    .useValue(options.delivery ?? null)
    .overrideProvider(ENVIRONMENT_HOOK_SOURCE)
    .useValue(options.environment ?? null)
    .overrideProvider(CALLER_HOOK_VALIDATOR)
    .useValue(null)
    .overrideProvider(HOOK_OUTCOME_SINK)
    .useValue(options.sink ?? null)
    .compile();
  await moduleRef.init();
  const dispatcher = moduleRef.get(HookDispatcher);
  // The ports land in the dispatcher's parts: delivery in the invoker and the gate, the sink in the recorder.
  const wired = dispatcher as unknown as { environment?: unknown; invoker: { delivery?: unknown }; gates: { delivery?: unknown }; recorder: { sink?: unknown } };
  const delivered = [wired.invoker.delivery, wired.gates.delivery].map((port) => port ?? undefined);
  if (delivered.some((port) => port !== options.delivery) || (wired.environment ?? undefined) !== options.environment || (wired.recorder.sink ?? undefined) !== options.sink) {
    await moduleRef.close();
    throw new Error('test kit: the dispatcher did not receive the ports it was given');
  }
  return { moduleRef, dispatcher, registry: moduleRef.get(HookRegistry) };
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Silences (and records) the dispatcher's Nest logger. Restore with `jest.restoreAllMocks()`. */
export function captureLogs(): { warn: jest.Mock; error: jest.Mock } {
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined) as unknown as jest.Mock;
  const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined) as unknown as jest.Mock;
  return { warn, error };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
