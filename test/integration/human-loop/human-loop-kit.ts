/**
 * Shared pieces of the human-loop tests: a config with agents that need approval, hand calls to an outside
 * executor, compact, and call sub-agents; local tools that count their executions; a poll helper.
 */
import { Injectable } from '@nestjs/common';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { RuntimeStore, StoredOperation } from '../../../src/runtime/runtime-store.port.js';
import { until } from '../../support/eventually.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

export const HUMAN_LOOP_CONFIG = scriptedConfig({
  system: 'human-loop',
  models: {
    writer: [toolCalls(call('fs/write', { path: '/tmp/report.txt' })), answer('wrote: {{lastToolResult}}')],
    twoWrites: [toolCalls(call('clock/now'), call('fs/write', { path: '/a' }), call('fs/write', { path: '/b' })), answer('done: {{lastToolResult}}')],
    browsing: [toolCalls(call('browser/open', { url: 'https://example.com' })), answer('page: {{lastToolResult}}')],
    chatty: [toolCalls(call('clock/now')), toolCalls(call('clock/now')), answer('final after {{lastToolResult}}')],
    delegating: [toolCalls(call('agents/call', { agentId: 'helper', instruction: 'what time is it?' })), answer('manager got: {{lastToolResult}}')],
    group: [toolCalls(call('agents/call', { agentId: 'helper', instruction: 'time please' }), call('agents/call', { agentId: 'ghost', instruction: 'boo' })), answer('group done: {{lastToolResult}}')],
    telling: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}} ({{prompt}})')],
    recursing: [toolCalls(call('agents/call', { agentId: 'recursive', instruction: 'again' })), answer('level({{lastToolResult}})')],
    delegatingWrite: [toolCalls(call('agents/call', { agentId: 'writer', instruction: 'write it' })), answer('boss got: {{lastToolResult}}')],
    decorated: [toolCalls(call('payments/refund'), call('device/photo')), answer('{{lastToolResult}}')],
  },
  clientTools: { 'browser/open': { description: 'opens a page (run by the client)', parameters: { type: 'object', properties: { url: { type: 'string' } } } } },
  agents: {
    decorated: { model: 'decorated', tools: ['payments/*', 'device/*'] },
    boss: { model: 'delegatingWrite', tools: ['agents/call'] },
    recursive: { model: 'recursing', tools: ['agents/call'] },
    everything: { model: 'telling', tools: ['*'] },
    manager: { model: 'delegating', tools: ['agents/*'] },
    grouper: { model: 'group', tools: ['agents/call'] },
    helper: { model: 'telling', tools: ['clock/*'] },
    writer: { model: 'writer', tools: ['fs/*', 'clock/*'], approval: ['^fs/write'] },
    batch: { model: 'twoWrites', tools: ['fs/*', 'clock/*'], approval: ['^fs/write'] },
    browser: { model: 'browsing', tools: ['browser/*'] },
    compacting: { model: 'chatty', tools: ['clock/*'], limits: { compactAtTokens: 20 } },
  },
});

export const executions = { write: 0, now: 0 };

@Injectable()
export class HumanLoopTools {
  @Tool({ identifier: 'fs', apiName: 'write', description: 'writes a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } })
  write(args: Record<string, unknown>) {
    executions.write++;
    return `written ${String(args.path)}`;
  }

  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now() {
    executions.now++;
    return '2026-11-30T12:00:00Z';
  }

  @Tool({ identifier: 'payments', apiName: 'refund', description: 'refunds (needs a human)', parameters: { type: 'object', properties: {} }, requiresApproval: true })
  refund() {
    executions.write++;
    return 'refunded';
  }

  @Tool({ identifier: 'device', apiName: 'photo', description: 'takes a photo on the device', parameters: { type: 'object', properties: {} }, deferred: true })
  photo(): string {
    throw new Error('a deferred tool is never run by the runtime');
  }
}

/** Polls the store until `check` holds (the operation pauses in the background). */
export async function untilOperation(store: RuntimeStore, operationId: string, check: (op: StoredOperation) => boolean, what = 'the operation'): Promise<StoredOperation> {
  return (await until(() => store.getOperation(operationId), (operation) => operation !== null && check(operation), `${what} to reach the expected state`, 10_000))!;
}

export const waiting = (op: StoredOperation) => op.status === 'waiting';
