/**
 * agents.yaml for tests, built from data: scripted models as lists of turns, agents and any other section as
 * plain objects. One place writes the YAML, so a spec states only what its run needs.
 *
 *   scriptedConfig({
 *     system: 'budgets-test',
 *     models: { twoClocks: [toolCalls(call('clock/now'), call('clock/now')), answer('done')] },
 *     agents: { capped: { model: 'twoClocks', tools: ['clock/*'], limits: { maxToolCalls: 1 } } },
 *   })
 */
import { stringify } from 'yaml';

export interface ScriptedToolCall {
  identifier: string;
  apiName: string;
  args?: Record<string, unknown>;
}

/** One answer of a scripted model: text, tool calls, or both. `{{lastToolResult}}` and `{{prompt}}` are filled in. */
export interface ScriptTurn {
  content?: string;
  toolCalls?: ScriptedToolCall[];
}

/** A scripted model with settings beside its script (retry, timeoutMs, a cost). */
export interface ScriptedModel {
  script: ScriptTurn[];
  costPerTokenUsd?: number;
  retry?: { attempts?: number; initialDelayMs?: number; maxDelayMs?: number };
  timeoutMs?: number;
}

export interface ConfigSpec {
  system?: string;
  /** A list of turns is a scripted model (at no cost, the default); an object with `provider` is written as it is. */
  models: Record<string, ScriptTurn[] | ScriptedModel | ({ provider: string } & Record<string, unknown>)>;
  agents: Record<string, Record<string, unknown>>;
  /** Any other top-level section (hooks, mcpServers, webhooks …), written as given. */
  [section: string]: unknown;
}

export const answer = (content: string): ScriptTurn => ({ content });

export const toolCalls = (...calls: ScriptedToolCall[]): ScriptTurn => ({ toolCalls: calls });

/** `call('clock/now')`: the tool by its `identifier/apiName`, with arguments (default none). */
export function call(tool: string, args: Record<string, unknown> = {}): ScriptedToolCall {
  const slash = tool.indexOf('/');
  if (slash <= 0) throw new Error(`call(): "${tool}" is not identifier/apiName`);
  return { identifier: tool.slice(0, slash), apiName: tool.slice(slash + 1), args };
}

export function scriptedConfig(spec: ConfigSpec): string {
  const models = Object.fromEntries(
    Object.entries(spec.models).map(([name, model]) => {
      if (Array.isArray(model)) return [name, { provider: 'scripted', script: model }];
      if ('provider' in model) return [name, model];
      return [name, { provider: 'scripted', ...model }];
    }),
  );
  return stringify({ ...spec, models }, { lineWidth: 0 });
}
