// A queue worker process for bench/queue-scaling.bench.mjs, from the build (settings as JSON in argv[2]).
import { bootstrapWorker, closeWorkerOnSignals } from '../dist/server/bootstrap-worker.js';

const settings = JSON.parse(process.argv[2]);
const app = await bootstrapWorker(settings);
closeWorkerOnSignals(app);
// The benchmark asks for this process's CPU time over IPC (when it started us with a channel).
if (process.send) {
  process.on('message', (message) => {
    if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
  });
  process.channel?.unref();
}
