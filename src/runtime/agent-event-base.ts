/** The common fields of every agent-family event (DESIGN §6), built in one place for the whole runtime. */
import { randomUUID } from 'node:crypto';
import type { AgentEventBase } from '../hooks/agent-events.js';

export interface EventOrigin {
  operationId: string;
  agentId: string;
  stepIndex: number;
  userId?: string;
  parentOperationId?: string;
  threadId?: string;
}

export function agentEventBase(origin: EventOrigin): Omit<AgentEventBase, 'type'> {
  return {
    id: randomUUID(),
    operationId: origin.operationId,
    agentId: origin.agentId,
    ...(origin.userId ? { userId: origin.userId } : {}),
    stepIndex: origin.stepIndex,
    timestamp: new Date().toISOString(),
    ...(origin.parentOperationId ? { parentOperationId: origin.parentOperationId } : {}),
    ...(origin.threadId ? { threadId: origin.threadId } : {}),
  };
}
