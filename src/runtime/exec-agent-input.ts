/** What `execAgent` takes (DESIGN §6), and whose operation it starts (DESIGN §12). */
import type { AgentHook } from '../hooks/agent-hook.js';
import type { RunContext } from '../hooks/contexts.js';
import type { ClientToolDeclaration } from './tools/client-tools.js';

export interface ExecAgentInput {
  agentId: string;
  prompt: string;
  hooks?: AgentHook[];
  context?: RunContext;
  /** Whose operation it is (the read API's `ownerId` filter, SPEC G9); default `context.userId`, else none. */
  ownerId?: string;
  idempotencyKey?: string;
  /**
   * With `idempotencyKey`: a digest of the request (the HTTP API sends SHA-256 of its canonical body). A retry
   * whose digest differs from the stored one is refused (G8); without a digest a retry is not compared.
   */
  idempotencyDigest?: string;
  /** Tools the caller's own executor runs (SPEC G1): offered when the agent's `tools:` selects them, always deferred. */
  clientTools?: ClientToolDeclaration[];
}

/** DESIGN §12: the owner given, else the run's user, else none (then listed only without an owner filter). */
export function ownerOf(input: Pick<ExecAgentInput, 'ownerId' | 'context'>): string | undefined {
  return input.ownerId ?? input.context?.userId;
}
