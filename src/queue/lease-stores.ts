/** The lease store on the runtime's database (queue mode), built once per DataSource. */
import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { OperationLeaseStore } from '../persistence/operation-lease.store.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';

@Injectable()
export class LeaseStores {
  private readonly byDataSource = new WeakMap<DataSource, OperationLeaseStore>();

  constructor(private readonly database: RuntimeDatabase) {}

  async leases(): Promise<OperationLeaseStore> {
    const { dataSource } = await this.database.stores();
    let store = this.byDataSource.get(dataSource);
    if (!store) {
      store = new OperationLeaseStore(dataSource);
      this.byDataSource.set(dataSource, store);
    }
    return store;
  }
}
