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
import { OperationEventsService } from './operation-events.service.js';
import { RuntimeDatabase } from './runtime-database.js';
import { NO_STEP_COMMIT_FAILPOINTS, STEP_COMMIT_FAILPOINTS } from './step-commit.store.js';
import { TimelineSink } from './timeline-sink.js';
import { TypeOrmOperationLeases } from './typeorm-operation-leases.js';
import { TypeOrmOperationReads } from './typeorm-operation-reads.js';
import { TypeOrmRuntimeStore } from './typeorm-runtime-store.js';

export const PERSISTENCE_PROVIDERS: Provider[] = [
  RuntimeDatabase,
  // No failpoints outside tests; a test overrides this provider to fail a commit between two writes.
  { provide: STEP_COMMIT_FAILPOINTS, useValue: NO_STEP_COMMIT_FAILPOINTS },
  // DESIGN §4: committed changes as events (this process's, and on PostgreSQL the others' via LISTEN/NOTIFY).
  OperationEventsService,
  { provide: OPERATION_EVENTS, useExisting: OperationEventsService },
  TypeOrmRuntimeStore,
  { provide: RUNTIME_STORE, useExisting: TypeOrmRuntimeStore },
  // The hook timeline; the module hands it to the dispatcher behind the tracing sink (HOOK_OUTCOME_SINK).
  TimelineSink,
  // SPEC G2 in every mode: the leases on running operations.
  TypeOrmOperationLeases,
  { provide: OPERATION_LEASES, useExisting: TypeOrmOperationLeases },
  // What the server reads of operations (API views, timeline, metrics), without persistence internals.
  TypeOrmOperationReads,
  { provide: OPERATION_READER, useExisting: TypeOrmOperationReads },
];
