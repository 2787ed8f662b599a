// A queue worker process for bench/queue-scaling.bench.mjs, from the build (settings as JSON in argv[2]).
// It counts what it sends at the client — every `pg` Client.query (a SQL statement) and every ioredis
// command (BullMQ's scripts included) — and reports them with its CPU time when the benchmark asks.
import { Redis } from 'ioredis';
import pg from 'pg';

const counts = { statements: 0, redis: 0 };
// BENCH_TRACE=1: which statements, by their first words, in the report.
const trace = process.env.BENCH_TRACE === '1' ? {} : undefined;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  counts.statements++;
  if (trace) {
    const text = (typeof args[0] === 'string' ? args[0] : (args[0]?.text ?? '')).replace(/\s+/g, ' ').slice(0, 70);
    trace[text] = (trace[text] ?? 0) + 1;
  }
  return clientQuery.apply(this, args);
};
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function countedCommand(command, ...rest) {
  counts.redis++;
  if (trace && command?.name) trace[`redis ${command.name}`] = (trace[`redis ${command.name}`] ?? 0) + 1;
  return sendCommand.call(this, command, ...rest);
};

const { bootstrapWorker, closeWorkerOnSignals } = await import('../dist/server/bootstrap-worker.js');
if (trace) {
  // And which calls of the runtime's store and leases ask for them.
  const { SqlRuntimeStore } = await import('../dist/persistence/sql-runtime-store.js');
  const { SqlOperationLeases } = await import('../dist/persistence/sql-operation-leases.js');
  for (const [label, cls] of [['store', SqlRuntimeStore], ['leases', SqlOperationLeases]]) {
    for (const name of Object.getOwnPropertyNames(cls.prototype)) {
      const original = cls.prototype[name];
      if (name === 'constructor' || typeof original !== 'function') continue;
      cls.prototype[name] = function countedCall(...args) {
        trace[`${label}.${name}()`] = (trace[`${label}.${name}()`] ?? 0) + 1;
        return original.apply(this, args);
      };
    }
  }
}
const settings = JSON.parse(process.argv[2]);
const app = await bootstrapWorker(settings);
closeWorkerOnSignals(app);
// The benchmark asks for this process's CPU time and counts over IPC (when it started us with a channel).
if (process.send) {
  process.on('message', (message) => {
    if (message === 'cpu') process.send({ cpu: process.cpuUsage(), ...counts, ...(trace ? { trace: { ...trace } } : {}) });
  });
  process.channel?.unref();
}
