/**
 * `agentctl purge --older-than 30d` (retention, DESIGN §9): deletes completed operations that finished more
 * than the age ago, with their messages, caller hooks, interventions, placeholders and timeline
 * (`RetentionStore`); running and waiting operations stay, however old. Prints what was deleted.
 */
import { existsSync } from 'node:fs';
import { createDataSourceOptions } from '../persistence/data-source-options.js';
import { openAgentHooksDataSource } from '../persistence/open-data-source.js';
import { createRuntimeStores } from '../persistence/runtime-stores.js';
import { UsageError } from './cli-options.js';

export interface PurgeCommandOptions {
  olderThanMs: number;
  database: string;
  /** Default the system clock. */
  now?: () => Date;
}

export async function purgeCommand(options: PurgeCommandOptions, out: NodeJS.WritableStream): Promise<number> {
  const settings = createDataSourceOptions(options.database);
  // Opening a SQLite path that does not exist would create an empty database: a typo should say so instead.
  if (settings.type === 'better-sqlite3' && settings.database !== ':memory:' && !existsSync(settings.database as string)) {
    throw new UsageError(`no database file at ${String(settings.database)} (--database sqlite:PATH)`);
  }
  const cutoff = new Date((options.now?.() ?? new Date()).getTime() - options.olderThanMs);
  const dataSource = await openAgentHooksDataSource(options.database);
  try {
    const counts = await createRuntimeStores(dataSource).retention.purgeCompletedBefore(cutoff);
    out.write(
      `purged ${counts.operations} completed operation${counts.operations === 1 ? '' : 's'} finished before ${cutoff.toISOString()}` +
        ` (${counts.messages} messages, ${counts.hookOutcomes} timeline rows, ${counts.callerHooks} caller hooks,` +
        ` ${counts.interventions} interventions, ${counts.placeholders} placeholders)\n`,
    );
    return 0;
  } finally {
    await dataSource.destroy();
  }
}
