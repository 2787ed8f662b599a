/**
 * Provides the host's DataSource under the `DataSource` class token (what `database: 'host'` looks up,
 * and what `TypeOrmModule.forRoot` would register), opened at start and closed at shutdown, after the
 * agent runtime has flushed its last writes into it.
 */
import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createDataSource } from './data-source.js';

@Global()
@Module({
  providers: [{ provide: DataSource, useFactory: () => createDataSource().initialize() }],
  exports: [DataSource],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
