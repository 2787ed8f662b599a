// A queue worker process for the multi-process tests, from the build: the same bootstrap `agentctl worker`
// uses. Settings come as JSON in AGENT_HOOKS_TEST_WORKER (config file, database, redis, queue tuning).
import { bootstrapWorker, closeWorkerOnSignals } from '../../../dist/server/bootstrap-worker.js';

const settings = JSON.parse(process.env.AGENT_HOOKS_TEST_WORKER ?? '{}');
const app = await bootstrapWorker({
  configFile: settings.configFile,
  database: settings.database,
  redis: settings.redis,
  queue: settings.queue,
  ...(settings.webhooks ? { webhooks: settings.webhooks } : {}),
});
closeWorkerOnSignals(app);
