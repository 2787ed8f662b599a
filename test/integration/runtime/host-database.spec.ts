/**
 * DESIGN §5/§6 `database: 'host'`: the runtime works in the host app's default TypeORM DataSource (the
 * `DataSource` class token, as `TypeOrmModule.forRoot` registers it). The host lists our entities, applies
 * our migrations in its own pipeline and owns the DataSource's life: we never migrate it and never close
 * it. Misconfigurations fail at first use with an error that names the fix. SQLite file and PostgreSQL.
 */
import { Injectable, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HookOutcomeEntity } from '../../../src/persistence/entities/hook-outcome.entity.js';
import { MessageEntity } from '../../../src/persistence/entities/message.entity.js';
import { OperationEntity } from '../../../src/persistence/entities/operation.entity.js';
import { DatabaseConfigError } from '../../../src/persistence/persistence-errors.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { driverSuites, listTables } from '../persistence/test-databases.js';
import { openHostDatabase, type HostDatabase } from './host-data-source.js';
import { bootRuntime, guardUnhandledRejections, rejectionOf, within, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const describeEachDriver = await driverSuites();

const CONFIG = scriptedConfig({
  system: 'host-database-test',
  models: {
    default: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')],
  },
  agents: {
    assistant: { model: 'default', tools: ['clock/now'] },
  },
});

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return '2026-11-30T00:00:00Z';
  }
}

/** The host's DataSource under the class token, as a plain provider. */
const hostProvider = (host: HostDatabase) => ({ provide: DataSource, useFactory: () => host.dataSource });

/** A host module shaped like @nestjs/typeorm's core module: global, and it closes its DataSource at shutdown. */
function closingHostModule(host: HostDatabase): DynamicModule {
  @Injectable()
  class HostDataSourceCloser implements OnApplicationShutdown {
    async onApplicationShutdown(): Promise<void> {
      await host.dataSource.destroy();
    }
  }
  return { module: class HostDatabaseModule {}, global: true, providers: [hostProvider(host), HostDataSourceCloser], exports: [DataSource] };
}

guardUnhandledRejections();

let app: RuntimeApp | undefined;
let host: HostDatabase | undefined;

afterEach(async () => {
  await app?.close();
  await host?.dispose();
  app = undefined;
  host = undefined;
}, 30_000);

describeEachDriver("database: 'host' on %s", (driver) => {
  it('DESIGN §6: a run persists in the host DataSource; closing the app flushes the timeline there and leaves it open', async () => {
    host = await openHostDatabase(driver);
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock, hostProvider(host)] });

    const result = await within(
      app.runtime.run('What time is it?', { agentId: 'assistant', hooks: [{ id: 'audit', type: 'afterToolCall', handler: () => undefined }] }),
      'the run',
      20_000,
    );
    expect(result).toMatchObject({ reason: 'done', content: 'It is 2026-11-30T00:00:00Z.' });
    expect((await app.moduleRef.get(RuntimeDatabase).stores()).dataSource).toBe(host.dataSource);

    const { dataSource } = host;
    const operation = await dataSource.getRepository(OperationEntity).findOneByOrFail({ id: result.operationId });
    expect(operation).toMatchObject({ agentId: 'assistant', status: 'completed', reason: 'done' });
    const messages = await dataSource.getRepository(MessageEntity).find({ where: { operationId: result.operationId }, order: { seq: 'ASC' } });
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What time is it?'],
      ['assistant', ''],
      ['tool', '2026-11-30T00:00:00Z'],
      ['assistant', 'It is 2026-11-30T00:00:00Z.'],
    ]);

    await app.close();
    app = undefined;
    // The host owns it: still open, and the timeline buffered at close was written into it.
    expect(dataSource.isInitialized).toBe(true);
    const timeline = await dataSource.getRepository(HookOutcomeEntity).findBy({ operationId: result.operationId });
    expect(timeline).toEqual([expect.objectContaining({ point: 'afterToolCall', hookId: 'audit', source: 'caller', outcome: 'notification' })]);
    const tables = await listTables(dataSource);
    // The host's pipeline records them in its own table, and each of ours in agent_hooks_migrations too (one
    // record whatever runs them: switching to a URL later applies nothing twice).
    expect(tables).toContain('migrations');
    expect(tables).toContain('agent_hooks_migrations');
  });

  it("DESIGN §5: without the host's migrations, first use fails naming AGENT_HOOKS_MIGRATIONS and creates nothing; once the host migrates, a retry runs", async () => {
    host = await openHostDatabase(driver, { migrate: false });
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock, hostProvider(host)] });

    const error = await rejectionOf(app.runtime.execAgent({ agentId: 'assistant', prompt: 'What time is it?' }));
    expect(error).toBeInstanceOf(DatabaseConfigError);
    expect((error as Error).message).toContain('AGENT_HOOKS_MIGRATIONS');
    expect((error as Error).message).toContain('AgentHooksInitialSchema1764460800000');
    expect((await listTables(host.dataSource)).filter((t) => t.startsWith('agent_hooks_') || t === 'migrations')).toEqual([]);
    expect(app.registry.operationCount).toBe(0);

    await host.migrate();
    const result = await within(app.runtime.run('What time is it?', { agentId: 'assistant' }), 'the retried run', 20_000);
    expect(result.reason).toBe('done');
  });

  it('a host module that closes its DataSource at shutdown (global, like TypeOrmModule) closes it after our timeline flush', async () => {
    host = await openHostDatabase(driver);
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock], imports: [closingHostModule(host)] });

    const result = await within(
      app.runtime.run('What time is it?', { agentId: 'assistant', hooks: [{ id: 'audit', type: 'afterToolCall', handler: () => undefined }] }),
      'the run',
      20_000,
    );
    await app.close();
    app = undefined;
    expect(host.dataSource.isInitialized).toBe(false);

    await host.dataSource.initialize();
    const timeline = await host.dataSource.getRepository(HookOutcomeEntity).findBy({ operationId: result.operationId });
    expect(timeline.map((row) => row.hookId)).toEqual(['audit']);
  });
});

describe("database: 'host' misconfigured", () => {
  it('no DataSource provider: first use fails saying the DataSource class token is expected', async () => {
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock] });
    const error = await rejectionOf(app.runtime.execAgent({ agentId: 'assistant', prompt: 'What time is it?' }));
    expect(error).toBeInstanceOf(DatabaseConfigError);
    expect((error as Error).message).toMatch(/default TypeORM DataSource.*DataSource class token.*none was found/);
  });

  it('our entities not listed: first use fails naming AGENT_HOOKS_ENTITIES and the missing entities', async () => {
    host = await openHostDatabase('sqlite', { entities: [OperationEntity] });
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock, hostProvider(host)] });
    const error = await rejectionOf(app.runtime.execAgent({ agentId: 'assistant', prompt: 'What time is it?' }));
    expect(error).toBeInstanceOf(DatabaseConfigError);
    expect((error as Error).message).toContain('AGENT_HOOKS_ENTITIES');
    expect((error as Error).message).toContain('MessageEntity');
    expect((error as Error).message).not.toContain('OperationEntity');
  });

  it('a driver other than better-sqlite3 or postgres: first use fails naming the supported drivers', async () => {
    // A real TypeORM DataSource of a driver we do not run on (capacitor needs no package, only its handle).
    const unsupported = new DataSource({ type: 'capacitor', database: 'host.db', driver: {} } as never);
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock, { provide: DataSource, useValue: unsupported }] });
    const error = await rejectionOf(app.runtime.execAgent({ agentId: 'assistant', prompt: 'What time is it?' }));
    expect(error).toBeInstanceOf(DatabaseConfigError);
    expect((error as Error).message).toMatch(/'capacitor' driver.*'better-sqlite3' and 'postgres'/);
  });

  it('an uninitialized DataSource: first use fails; we do not open the host\'s DataSource for it', async () => {
    host = await openHostDatabase('sqlite');
    await host.dataSource.destroy();
    app = await bootRuntime({ config: CONFIG, database: 'host', providers: [Clock, hostProvider(host)] });
    const error = await rejectionOf(app.runtime.execAgent({ agentId: 'assistant', prompt: 'What time is it?' }));
    expect(error).toBeInstanceOf(DatabaseConfigError);
    expect((error as Error).message).toContain('not initialized');
    expect(host.dataSource.isInitialized).toBe(false);
  });
});
