/**
 * One record of our migrations, whatever runs them (DESIGN §5): `agent_hooks_migrations`, in the schema of
 * the DataSource. Our own DataSources and `runAgentHooksMigrations(dataSource)` record there; a host that
 * lists `AGENT_HOOKS_MIGRATIONS` in its own pipeline records them in its own migrations table as TypeORM
 * does, and each of our migrations also records itself in `agent_hooks_migrations` — and does nothing when
 * it is already recorded there. So switching between `database: 'postgres://…'` and `database: 'host'` on
 * one database never applies a migration twice (`relation … already exists`). Records a host pipeline made
 * in its own table before this existed are adopted (`adoptRecords`).
 */
import { Migration, MigrationExecutor, type DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';

export const AGENT_HOOKS_MIGRATIONS_TABLE = 'agent_hooks_migrations';

/** Set on a query runner while our executor runs migrations: it records them itself. */
const OUR_EXECUTOR = 'nestAgentHooksMigrationExecutor';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeScript's mixin rule wants `any[]`.
type MigrationClass = new (...args: any[]) => MigrationInterface;

/** A migration executor over our migrations only, recording them in `agent_hooks_migrations`. */
export class AgentHooksMigrationExecutor extends MigrationExecutor {
  constructor(
    dataSource: DataSource,
    private readonly classes: readonly MigrationClass[],
    queryRunner?: QueryRunner,
  ) {
    super(dataSource, queryRunner);
    const { schema } = dataSource.driver.options as { schema?: string };
    // TypeORM reads the table name from the DataSource options; ours is fixed, whatever the DataSource says.
    Object.assign(this, {
      migrationsTableName: AGENT_HOOKS_MIGRATIONS_TABLE,
      migrationsTable: dataSource.driver.buildTableName(AGENT_HOOKS_MIGRATIONS_TABLE, schema, dataSource.driver.database),
    });
    if (queryRunner) queryRunner.data = { ...queryRunner.data, [OUR_EXECUTOR]: true };
  }

  protected override getMigrations(): Migration[] {
    return this.classes.map((Class) => {
      const instance = new Class();
      const name = instance.name ?? Class.name;
      return new Migration(undefined, Number(name.slice(-13)), name, instance);
    });
  }

  /** Names recorded in `agent_hooks_migrations` (none when the table does not exist yet). */
  async recordedNames(queryRunner: QueryRunner): Promise<Set<string>> {
    if (!(await queryRunner.hasTable(this.table()))) return new Set();
    return new Set((await this.loadExecutedMigrations(queryRunner)).map((migration) => migration.name));
  }

  /** Records `name` (creating the table when needed). */
  async record(queryRunner: QueryRunner, name: string): Promise<void> {
    await this.createMigrationsTableIfNotExist(queryRunner);
    await this.insertExecutedMigration(queryRunner, new Migration(undefined, Number(name.slice(-13)), name));
  }

  async unrecord(queryRunner: QueryRunner, name: string): Promise<void> {
    if (await queryRunner.hasTable(this.table())) await this.deleteExecutedMigration(queryRunner, new Migration(undefined, Number(name.slice(-13)), name));
  }

  /**
   * Our migrations a host pipeline recorded only in its own migrations table (the DataSource's, or
   * TypeORM's default `migrations`): recorded in ours too, so they are not applied again.
   */
  async adoptRecords(queryRunner: QueryRunner): Promise<void> {
    const foreign = await this.foreignNames(queryRunner);
    if (foreign.size === 0) return;
    const recorded = await this.recordedNames(queryRunner);
    for (const migration of this.getMigrations()) {
      if (foreign.has(migration.name) && !recorded.has(migration.name)) await this.record(queryRunner, migration.name);
    }
  }

  /** Our migration names recorded in another migrations table. */
  async foreignNames(queryRunner: QueryRunner): Promise<Set<string>> {
    const dataSource = this.dataSource;
    const { schema } = dataSource.driver.options as { schema?: string };
    const ours = new Set(this.getMigrations().map((migration) => migration.name));
    const names = new Set<string>();
    const tables = new Set([dataSource.options.migrationsTableName ?? 'migrations', 'migrations']);
    tables.delete(AGENT_HOOKS_MIGRATIONS_TABLE);
    for (const table of tables) {
      const qualified = dataSource.driver.buildTableName(table, schema, dataSource.driver.database);
      if (!(await queryRunner.hasTable(qualified))) continue;
      const rows = (await queryRunner.manager.createQueryBuilder(queryRunner).select('"name"', 'name').from(qualified, 'recorded').getRawMany()) as { name: string }[];
      for (const { name } of rows) if (ours.has(name)) names.add(name);
    }
    return names;
  }

  private table(): string {
    return (this as unknown as { migrationsTable: string }).migrationsTable;
  }
}

/**
 * Our migration as a host's own pipeline runs it: skipped when `agent_hooks_migrations` already records
 * it (our DataSource applied it), else applied and recorded there too. Under our executor it just runs.
 */
export function recordedOnce<T extends MigrationClass>(Class: T): T {
  const named = { [Class.name]: class extends Class {} }[Class.name]!;
  const upOf = named.prototype.up;
  const downOf = named.prototype.down;
  Object.assign(named.prototype, {
    async up(this: MigrationInterface, queryRunner: QueryRunner): Promise<void> {
      // Our executor, or any executor whose table is ours, records it itself.
      if (queryRunner.data?.[OUR_EXECUTOR] || queryRunner.connection.options.migrationsTableName === AGENT_HOOKS_MIGRATIONS_TABLE) return upOf.call(this, queryRunner);
      const executor = new AgentHooksMigrationExecutor(queryRunner.connection, [], undefined);
      const name = this.name ?? Class.name;
      if ((await executor.recordedNames(queryRunner)).has(name)) return;
      await upOf.call(this, queryRunner);
      await executor.record(queryRunner, name);
    },
    async down(this: MigrationInterface, queryRunner: QueryRunner): Promise<void> {
      await downOf.call(this, queryRunner);
      if (!queryRunner.data?.[OUR_EXECUTOR] && queryRunner.connection.options.migrationsTableName !== AGENT_HOOKS_MIGRATIONS_TABLE) await new AgentHooksMigrationExecutor(queryRunner.connection, [], undefined).unrecord(queryRunner, this.name ?? Class.name);
    },
  });
  return named as T;
}
