/**
 * Shared pieces of the Runtime II tests: a config with agents that need approval, hand calls to an outside
 * executor, compact, and call sub-agents; local tools that count their executions; a poll helper.
 */
import { Injectable } from '@nestjs/common';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import type { RuntimeStore, StoredOperation } from '../../../src/runtime/runtime-store.port.js';
import { until } from '../../support/eventually.js';

export const RUNTIME2_CONFIG = `
system: runtime-two
models:
  writer:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: fs, apiName: write, args: { path: "/tmp/report.txt" } } ]
      - content: "wrote: {{lastToolResult}}"
  twoWrites:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} }, { identifier: fs, apiName: write, args: { path: "/a" } }, { identifier: fs, apiName: write, args: { path: "/b" } } ]
      - content: "done: {{lastToolResult}}"
  browsing:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: browser, apiName: open, args: { url: "https://example.com" } } ]
      - content: "page: {{lastToolResult}}"
  chatty:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - content: "final after {{lastToolResult}}"
  delegating:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: agents, apiName: call, args: { agentId: helper, instruction: "what time is it?" } } ]
      - content: "manager got: {{lastToolResult}}"
  group:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: agents, apiName: call, args: { agentId: helper, instruction: "time please" } }, { identifier: agents, apiName: call, args: { agentId: ghost, instruction: "boo" } } ]
      - content: "group done: {{lastToolResult}}"
  telling:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: clock, apiName: now, args: {} } ]
      - content: "It is {{lastToolResult}} ({{prompt}})"
  recursing:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: agents, apiName: call, args: { agentId: recursive, instruction: "again" } } ]
      - content: "level({{lastToolResult}})"
  delegatingWrite:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: agents, apiName: call, args: { agentId: writer, instruction: "write it" } } ]
      - content: "boss got: {{lastToolResult}}"
  decorated:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - toolCalls: [ { identifier: payments, apiName: refund, args: {} }, { identifier: device, apiName: photo, args: {} } ]
      - content: "{{lastToolResult}}"
clientTools:
  browser/open: { description: "opens a page (run by the client)", parameters: { type: object, properties: { url: { type: string } } } }
agents:
  decorated: { model: decorated, tools: [ "payments/*", "device/*" ] }
  boss: { model: delegatingWrite, tools: [ "agents/call" ] }
  recursive: { model: recursing, tools: [ "agents/call" ] }
  everything: { model: telling, tools: [ "*" ] }
  manager: { model: delegating, tools: [ "agents/*" ] }
  grouper: { model: group, tools: [ "agents/call" ] }
  helper: { model: telling, tools: [ "clock/*" ] }
  writer: { model: writer, tools: [ "fs/*", "clock/*" ], approval: [ "^fs/write" ] }
  batch: { model: twoWrites, tools: [ "fs/*", "clock/*" ], approval: [ "^fs/write" ] }
  browser: { model: browsing, tools: [ "browser/*" ] }
  compacting: { model: chatty, tools: [ "clock/*" ], limits: { compactAtTokens: 20 } }
`;

export const executions = { write: 0, now: 0 };

@Injectable()
export class Runtime2Tools {
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
