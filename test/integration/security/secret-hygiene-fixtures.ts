/**
 * Fixtures of the secret-hygiene scenario: distinct marker values for every kind of sensitive data, the
 * agents (scripted models), a tool that returns a marker and one that throws with one, engine-family observe
 * hooks that record what they receive, and the caller hooks (notifications, an afterToolCall control).
 */
import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AuthContext, HookInvocation, OnHook, RunContext, type AgentHook, type HookPoint } from '../../../src/index.js';
import type { AgentDirectory, ResolvedAgent } from '../../../src/runtime/agent-directory.port.js';
import type { ChatModel, ChatRequest, ChatResponse } from '../../../src/runtime/models/chat-model.js';
import type { ConfigAgentDirectory } from '../../../src/config/config-agent-directory.js';
import { errorType } from '../../../src/hooks/hook-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const marker = (kind: string): string => `${kind}-MARKER-${randomBytes(6).toString('hex')}`;
const SIGNING_KEY = marker('SIGNING');
const SIGNING_BASE64 = Buffer.from(SIGNING_KEY).toString('base64');

export const MARKERS = {
  env: marker('ENV'),
  token: marker('TOKEN'),
  prompt: marker('PROMPT'),
  args: marker('ARGS'),
  result: marker('RESULT'),
  error: marker('ERROR'),
  signing: `whsec_${SIGNING_BASE64}`,
} as const;

/** Secrets proper: never anywhere, not even in the published conversation (S2, DESIGN §5). */
export const SECRETS: readonly string[] = [MARKERS.env, MARKERS.token, MARKERS.signing, SIGNING_BASE64, SIGNING_KEY];
/** What only the published conversation may hold (S1). */
export const CONVERSATION: readonly string[] = [MARKERS.prompt, MARKERS.args, MARKERS.result];

export const CONFIG = scriptedConfig({
  system: 'secret-hygiene',
  models: {
    lookup: [toolCalls(call('vault/lookup', { query: MARKERS.args })), answer('answer: {{lastToolResult}}')],
    explode: [toolCalls(call('vault/explode', { query: MARKERS.args }))],
  },
  agents: {
    auditor: { model: 'lookup', tools: ['vault/*'] },
    breaker: { model: 'explode', tools: ['vault/*'] },
  },
});

@Injectable()
export class VaultTools {
  @Tool({ identifier: 'vault', apiName: 'lookup', description: 'looks up', parameters: { type: 'object', properties: { query: { type: 'string' } } } })
  lookup(): string {
    return `record ${MARKERS.result}`;
  }

  @Tool({ identifier: 'vault', apiName: 'explode', description: 'fails', parameters: { type: 'object', properties: { query: { type: 'string' } } } })
  explode(): string {
    throw new Error(`vault exploded on ${MARKERS.error}`);
  }
}

export interface ObservedInvocation {
  readonly point: HookPoint;
  readonly invocation: HookInvocation;
}

/** What the engine observe hooks received, and the error types `on_run_error` recorded. */
export const observed: ObservedInvocation[] = [];
export const runErrors: Array<{ type: string; raw: unknown }> = [];

/** Engine-family observe hooks, plus a `warn` hook that throws with sensitive text in its message (a log probe). */
@Injectable()
export class EngineObservers {
  @OnHook('before_tool_call')
  beforeTool(invocation: HookInvocation): void {
    observed.push({ point: 'before_tool_call', invocation });
  }

  @OnHook('after_tool_call')
  afterTool(invocation: HookInvocation): void {
    observed.push({ point: 'after_tool_call', invocation });
  }

  @OnHook('on_tool_error')
  toolError(invocation: HookInvocation): void {
    observed.push({ point: 'on_tool_error', invocation });
  }

  @OnHook('after_tool_call', { id: 'leaky-audit', failurePolicy: 'warn' })
  leakyAudit(): void {
    throw new Error(`audit failed near ${MARKERS.result} ${MARKERS.token}`);
  }

  /** The worked example's safe `on_run_error`: it records the error type only (S3). */
  @OnHook('on_run_error')
  runError(invocation: HookInvocation): void {
    runErrors.push({ type: errorType(invocation.payload), raw: invocation.payload });
  }
}

/** A host's own provider whose errors echo the request, as real provider SDKs often do. */
export class ProviderRejectedError extends Error {
  override readonly name = 'ProviderRejectedError';
}

function echoingModel(inner: ChatModel): ChatModel {
  return {
    complete: async (request: ChatRequest): Promise<ChatResponse> => {
      const tool = request.messages.findLast((m) => m.role === 'tool');
      if (tool) throw new ProviderRejectedError(`provider rejected the request: ${tool.content}`);
      return inner.complete(request);
    },
  };
}

/** The host's agent directory over agents.yaml; agent `breaker` uses the echoing provider. */
export function hostDirectory(config: ConfigAgentDirectory): AgentDirectory {
  return {
    systemName: config.systemName,
    metadata: config.metadata,
    agent: (agentId: string): ResolvedAgent | undefined => {
      const agent = config.agent(agentId);
      return agent && agentId === 'breaker' ? { ...agent, model: echoingModel(agent.model) } : agent;
    },
  };
}

export function callerHooks(receiver: LoopbackReceiver, prefix: string): AgentHook[] {
  const webhook = (path: string) => ({
    url: receiver.url(path),
    headers: { Authorization: 'Bearer ${HOOK_TOKEN}' },
    allowedEnvVars: ['HOOK_TOKEN'],
    timeout: 5,
  });
  const notifications = (['beforeStep', 'afterStep', 'beforeToolCall', 'afterToolCall', 'onToolCallError', 'onError', 'onComplete'] as const).map(
    (type): AgentHook => ({ id: `${prefix}-notify-${type}`, type, webhook: webhook('/notify') }),
  );
  return [
    ...notifications,
    { id: `${prefix}-control`, type: 'afterToolCall', webhook: { ...webhook('/control'), responseHandling: 'toolCall', onError: 'block' } },
    // An in-process handler that throws with conversation data in its message (D1: logged, dispatch goes on).
    {
      id: `${prefix}-throwing-handler`,
      type: 'afterStep',
      handler: () => {
        throw new Error(`handler choked on ${MARKERS.prompt} ${MARKERS.args}`);
      },
    },
  ];
}

export function context(): RunContext {
  return new RunContext({
    runId: 'ignored',
    userId: 'user-1',
    authContext: new AuthContext({ inboundAccessToken: MARKERS.token, scopes: ['kb:read'] }),
  });
}
