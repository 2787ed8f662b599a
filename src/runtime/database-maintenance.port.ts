/**
 * What the server's operations side asks of the runtime's database besides reading operations
 * (`OPERATION_READER`): whether it answers (readiness) and the retention purge. Implemented by persistence
 * (`SqlDatabaseMaintenance`), so `server/` never composes the stores itself (DESIGN §2).
 */

/** Rows a purge deleted, by table. */
export interface PurgeCounts {
  operations: number;
  messages: number;
  callerHooks: number;
  hookOutcomes: number;
  interventions: number;
  placeholders: number;
}

export interface DatabaseMaintenance {
  /** Resolves once the database (opened on first use) answered a trivial statement; rejects otherwise. */
  ping(): Promise<void>;
  /** Deletes operations completed before `cutoff`, with all their rows (running and waiting ones never). */
  purgeCompletedBefore(cutoff: Date): Promise<PurgeCounts>;
}

export const DATABASE_MAINTENANCE = Symbol('nest-agent-hooks:DatabaseMaintenance');
