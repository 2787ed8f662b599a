/**
 * The persistence room's providers. The database opens on first use (`RuntimeDatabase.stores()`: an app
 * that only uses hooks never opens one) and then builds every store once (`createRuntimeStores`); the
 * providers below implement the runtime's and the hooks core's ports over that one bundle. The
 * `ShutdownCoordinator` closes them last, in its order (G4).
 */
import type { Provider } from '@nestjs/common';
import { OPERATION_EVENTS } from '../runtime/operation-events.port.js';
import { OPERATION_LEASES } from '../runtime/operation-leases.port.js';
import { OPERATION_READER } from '../runtime/operation-read.port.js';
import { RUNTIME_STORE } from '../runtime/runtime-store.port.js';
import { DATABASE_MAINTENANCE } from '../runtime/database-maintenance.port.js';
import { OperationEventsService } from './operation-events.service.js';
import { RuntimeDatabase } from './runtime-database.js';
import { SqlDatabaseMaintenance } from './sql-database-maintenance.js';
import { NO_SQL_SESSION_WRAPPER, SQL_SESSION_WRAPPER } from './sql-session.js';
import { TimelineSink } from './timeline-sink.js';
import { SqlOperationLeases } from './sql-operation-leases.js';
import { SqlOperationReads } from './sql-operation-reads.js';
import { SqlRuntimeStore } from './sql-runtime-store.js';

export const PERSISTENCE_PROVIDERS: Provider[] = [
  RuntimeDatabase,
  // The stores' SQL session as it is outside tests; a test overrides this provider to fail a statement.
  { provide: SQL_SESSION_WRAPPER, useValue: NO_SQL_SESSION_WRAPPER },
  // DESIGN §4: committed changes as events (this process's, and on PostgreSQL the others' via LISTEN/NOTIFY).
  OperationEventsService,
  { provide: OPERATION_EVENTS, useExisting: OperationEventsService },
  SqlRuntimeStore,
  { provide: RUNTIME_STORE, useExisting: SqlRuntimeStore },
  // The hook timeline; the module hands it to the dispatcher behind the tracing sink (HOOK_OUTCOME_SINK).
  TimelineSink,
  // SPEC G2 in every mode: the leases on running operations.
  SqlOperationLeases,
  { provide: OPERATION_LEASES, useExisting: SqlOperationLeases },
  // What the server reads of operations (API views, timeline, metrics), without persistence internals.
  SqlOperationReads,
  { provide: OPERATION_READER, useExisting: SqlOperationReads },
  // Readiness and the retention purge, for the server's operations side.
  SqlDatabaseMaintenance,
  { provide: DATABASE_MAINTENANCE, useExisting: SqlDatabaseMaintenance },
];
