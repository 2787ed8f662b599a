/** Standalone server entry (`node dist/main.js`): the same as `agentctl serve` with its defaults. */
import 'reflect-metadata';
import { bootstrapServer, closeOnSignals } from './server/bootstrap-server.js';

const app = await bootstrapServer({
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 3000),
  configFile: 'config/agents.yaml',
  database: 'sqlite:./data/agent-hooks.sqlite',
});
closeOnSignals(app);
