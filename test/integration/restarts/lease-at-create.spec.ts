/**
 * Issue 14 (cost per operation), G2: in local mode a new operation is created with its creator's lease in
 * the same INSERT, so no second statement takes it before `on_run_start` and the first step, and no window
 * exists in which another process's reconciler could find it unheld. The steps run under that lease, and it
 * is the one the whole run keeps (no acquire at all for a run that never waits).
 */
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { OnHook, RunContext } from '../../../src/index.js';
import { OPERATION_LEASES, type OperationLeases } from '../../../src/runtime/operation-leases.port.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { bootRuntime, oneAnswerConfig } from '../runtime/runtime-test-kit.js';

const CONFIG = oneAnswerConfig('lease-test');

/** What the row said while `on_run_start` ran: the first moment after the creation the runtime acts on. */
const seenAtRunStart: Array<{ leaseOwner: string | undefined; leaseUntil: string | undefined }> = [];

@Injectable()
class RunStartProbe {
  // The store is the module's own provider, not exported to the host: looked up through the app's ModuleRef.
  constructor(private readonly moduleRef: ModuleRef) {}

  @OnHook('on_run_start')
  async probe({ payload }: { payload: RunContext }): Promise<RunContext> {
    const store = this.moduleRef.get<RuntimeStore>(RUNTIME_STORE, { strict: false });
    const operation = (await store.getOperation(payload.runId))!;
    // The runtime's record type names only the owner; the store's record (persistence/records.ts) carries the expiry too.
    seenAtRunStart.push({ leaseOwner: operation.leaseOwner, leaseUntil: (operation as { leaseUntil?: string }).leaseUntil });
    return payload;
  }
}

describe('issue 14: a new operation is created under its creator\'s lease', () => {
  it('G2: held from its INSERT on — on_run_start already sees this process\'s lease, and the run takes no lease by a statement of its own', async () => {
    const app = await bootRuntime({ config: CONFIG, providers: [RunStartProbe] });
    try {
      const leases = app.moduleRef.get<OperationLeases>(OPERATION_LEASES);
      let acquired = 0;
      const acquire = leases.acquire.bind(leases);
      leases.acquire = (...args: Parameters<OperationLeases['acquire']>) => {
        acquired++;
        return acquire(...args);
      };
      const result = await app.runtime.run('hello', { agentId: 'assistant' });
      expect(result).toMatchObject({ reason: 'done' });
      expect(seenAtRunStart).toHaveLength(1);
      expect(seenAtRunStart[0]!.leaseOwner).toEqual(expect.stringContaining(`${process.pid}:`));
      expect(Date.parse(seenAtRunStart[0]!.leaseUntil!)).toBeGreaterThan(Date.now());
      expect(acquired).toBe(0);
    } finally {
      await app.close();
    }
  });
});
