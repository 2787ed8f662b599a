import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { assertNoSettingProblems } from '../config/environment/environment-setting.js';
import { moduleSettingProblems } from '../config/environment/module-settings.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';
import { API_KEYS_ENV, API_KEYS_FILE_ENV } from './api/api-keys.js';
import { useJsonBody } from './api/json-body.js';
import { assertLoopbackWithoutKeys } from './api/loopback-host.js';
import { setupOpenApi } from './api/openapi.js';
import { serverApiOptionsFromEnvironment } from './api/server-api.options.js';
import { ServerModule } from './server.module.js';
import { JsonLogger } from './ops/json-logger.js';
import { requestLog } from './ops/request-log.middleware.js';
import { incomingTrace } from './api/incoming-trace.middleware.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { RetentionScheduler, type RetentionSchedule } from './ops/retention-scheduler.js';

export interface ServeOptions extends AgentHooksModuleOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The optional periodic purge (`serve --purge-older-than`); off when absent. */
  purge?: RetentionSchedule;
}

/** Boots the standalone server and listens; prints `listening on http://HOST:PORT` as one log line. */
export async function bootstrapServer(options: ServeOptions): Promise<INestApplication> {
  const { host, port, purge, ...moduleOptions } = options;
  // Settings first, before Nest or the database: a bad value, or no keys on a public address, stops the start (exit 2, G7).
  assertNoSettingProblems(moduleSettingProblems(moduleOptions));
  const api = serverApiOptionsFromEnvironment();
  assertLoopbackWithoutKeys(host, api.apiKeys);
  const jsonLogger = new JsonLogger();
  const app = await NestFactory.create<NestExpressApplication>(ServerModule.forRoot(moduleOptions, api), {
    // Structured JSON lines on stdout (pino); LOG_LEVEL sets the level.
    logger: jsonLogger,
    // A failed start throws to the caller (agentctl maps it to an exit code) instead of exiting here.
    abortOnError: false,
    // Shutdown: requests on kept-alive connections get 503; connections still open (event streams) are cut
    // once the runtime has stopped its steps, so closing never waits on a client.
    return503OnClosing: true,
    forceCloseConnections: true,
    // Our own JSON parser, with the size limit (413) the API promises.
    bodyParser: false,
  });
  // Before the body parser, so refused bodies (400, 413) are logged with their request id too.
  app.use(requestLog(jsonLogger));
  // No framework banner in responses.
  app.disable('x-powered-by');
  useJsonBody(app);
  // After the body parser: the handler runs in the caller's trace context (O2).
  app.use(incomingTrace(app.get(AgentTracer)));
  setupOpenApi(app);
  // Open the database and run migrations before serving (DESIGN §5: migrations run at start).
  await app.get(RuntimeDatabase).stores();
  if (purge) app.get(RetentionScheduler).start(purge);
  await app.listen(port, host);
  const address = app.getHttpServer().address() as { port: number } | string | null;
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const logger = new Logger('Server');
  if (!api.apiKeys.enabled) logger.warn(`auth is off: no API keys (${API_KEYS_ENV} or ${API_KEYS_FILE_ENV}); listening on loopback only, every caller is owner "local"`);
  // The URL is followed by a space: tests and scripts find it with /listening on (http:\/\/\S+)/ in the JSON line.
  logger.log(`listening on http://${shownHost}:${actualPort} (pid ${process.pid})`);
  return app;
}

/** SIGTERM/SIGINT: stop accepting, close the app (steps persist, `on_engine_stop`, database), exit 0. */
export { closeOnSignals } from './ops/graceful-shutdown.js';
