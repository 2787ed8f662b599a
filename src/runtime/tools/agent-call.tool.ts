/**
 * The built-in sub-agent tool `agents/call` with args `{ agentId, instruction }` (DESIGN §8). It is in the
 * catalog like any tool (an agent's `tools` globs decide who may use it) but never runs through
 * `execute`: the step executor starts a child operation and the completion bridge publishes its answer.
 */
import type { ToolDefinition } from './tool-types.js';

export const AGENT_CALL_IDENTIFIER = 'agents';
export const AGENT_CALL_API_NAME = 'call';

export const AGENT_CALL_TOOL: ToolDefinition = Object.freeze({
  identifier: AGENT_CALL_IDENTIFIER,
  apiName: AGENT_CALL_API_NAME,
  description: 'Delegates a task to another agent and returns its final answer.',
  parameters: Object.freeze({
    type: 'object',
    properties: { agentId: { type: 'string', minLength: 1 }, instruction: { type: 'string' } },
    required: ['agentId', 'instruction'],
    additionalProperties: false,
  }),
  requiresApproval: false,
  deferred: false,
  source: 'agent' as const,
});

export function isAgentCall(tool: Pick<ToolDefinition, 'source'> | undefined): boolean {
  return tool?.source === 'agent';
}
