import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';
import { ServerModule } from './server.module.js';

export interface ServeOptions extends AgentHooksModuleOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
}

/** Boots the standalone server and listens; prints `listening on http://HOST:PORT` as one log line. */
export async function bootstrapServer(options: ServeOptions): Promise<INestApplication> {
  const { host, port, ...moduleOptions } = options;
  const app = await NestFactory.create(ServerModule.forRoot(moduleOptions), { logger: ['log', 'warn', 'error'] });
  // Open the database and run migrations before serving (DESIGN §5: migrations run at start).
  await app.get(RuntimeDatabase).stores();
  await app.listen(port, host);
  const address = app.getHttpServer().address() as { port: number } | string | null;
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  new Logger('Server').log(`listening on http://${shownHost}:${actualPort}`);
  return app;
}

/** Closes the app (running shutdown hooks, e.g. `on_engine_stop`) on SIGTERM/SIGINT and exits 0. */
export function closeOnSignals(app: INestApplication): void {
  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    new Logger('Server').log(`${signal} received; shutting down`);
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
