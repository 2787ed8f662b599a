/**
 * Leases (DESIGN §4, SPEC G2): whichever process drives an operation's step holds its lease in the database
 * and renews it while it works; every commit of the step is fenced by the holder's id. A lease expires on
 * its own, so the operation of a process that died is taken over by a reconciler. The `persistence/` room
 * implements this port.
 */
import type { StoredOperation } from './runtime-store.port.js';

export interface RecoverableOperation {
  id: string;
  version: number;
}

/** The operation's state as its lease was let go (read by the same statement). */
export interface ReleasedOperation {
  version: number;
  status: StoredOperation['status'];
}

export interface OperationLeases {
  /**
   * Takes the lease if it is free, expired or already `owner`'s, and answers the operation as that
   * statement found it; null if another holder has it or the operation is completed. With `stepFollows`
   * (the default) a step begins under it at once and works from that state without reading it again;
   * without, other work comes first (a slow notification) and the step must read what is current then.
   */
  acquire(operationId: string, owner: string, ttlMs: number, stepFollows?: boolean): Promise<StoredOperation | null>;
  /** Extends `owner`'s lease: false once it moved on (stop working; another process may run the step). */
  renew(operationId: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Lets the lease go (the operation waits, or another step is scheduled): its state as it did, or null if `owner` no longer held it. */
  release(operationId: string, owner: string): Promise<ReleasedOperation | null>;
  /** Lets the lease go so that the next reconcile pass takes the operation over (shutdown, G4). */
  handBack(operationId: string, owner: string): Promise<boolean>;
  /** Running operations whose lease expired, or that nobody holds and that have been quiet since `quietSince`. */
  listRecoverable(quietSince: string, limit: number): Promise<RecoverableOperation[]>;
  /** False when no database exists yet (nothing to recover; a reconcile pass must not create one). */
  mayHoldWork(): boolean;
  /** Extends `owner`'s hold on the terminal sequence of a completed operation. */
  renewTerminalHold(operationId: string, owner: string, ttlMs: number): Promise<boolean>;
}

export const OPERATION_LEASES = Symbol('nest-agent-hooks:OperationLeases');
