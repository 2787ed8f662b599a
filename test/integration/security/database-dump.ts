/**
 * Every row of every table of a SQLite file, as JSON text per table, read through a fresh connection
 * after the app has closed (so batched writes such as the timeline are flushed).
 */
import { DataSource } from 'typeorm';

/** Table name → its rows, each serialized with `JSON.stringify`. */
export type DatabaseDump = ReadonlyMap<string, readonly string[]>;

export async function dumpSqlite(file: string): Promise<DatabaseDump> {
  const dataSource = new DataSource({ type: 'better-sqlite3', database: file });
  await dataSource.initialize();
  try {
    const tables: Array<{ name: string }> = await dataSource.query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`);
    const dump = new Map<string, string[]>();
    for (const { name } of tables) {
      const rows: unknown[] = await dataSource.query(`SELECT * FROM "${name.replaceAll('"', '""')}"`);
      dump.set(name, rows.map((row) => JSON.stringify(row)));
    }
    return dump;
  } finally {
    await dataSource.destroy();
  }
}

/** `table: row` for every row (of the given tables) holding one of `needles`. */
export function rowsContaining(dump: DatabaseDump, needles: readonly string[], tables: readonly string[] = [...dump.keys()]): string[] {
  const hits: string[] = [];
  for (const table of tables) {
    for (const row of dump.get(table) ?? []) if (needles.some((needle) => row.includes(needle))) hits.push(`${table}: ${row}`);
  }
  return hits;
}
