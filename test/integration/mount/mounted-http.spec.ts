/**
 * SPEC G9 and DESIGN §12 "Mounting the HTTP API and the console in a host app": a real Nest host app with
 * its own bearer-token guard (APP_GUARD), its own global interceptor and exception filter, and
 * `AgentHooksHttpModule.register({ path: 'agents', owner })`, listening on loopback. Every mounted route
 * answers for the owner the host's resolver returns and nothing else; the host's guard and interceptor run
 * on our routes; our error shape and body limits hold; the console is served under the prefix and its
 * page and assets pass a bearer-only guard that honours `AGENT_HOOKS_PUBLIC`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Catch,
  Controller,
  Get,
  Injectable,
  Module,
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import type { Request, Response } from 'express';
import { tap, type Observable } from 'rxjs';
import { AGENT_HOOKS_PUBLIC, AgentHooksHttpModule, AgentHooksHttpModuleError, AgentHooksModule } from '../../../src/index.js';
import { listConsoleFiles } from '../../../src/server/console/console-files.js';
import { CONSOLE_FILES } from '../../../src/server/console/console.controller.js';
import { apiClient, expectErrorShape, until } from '../../e2e/support/http-client.js';
import { readEvents } from '../../e2e/support/sse.js';
import { appDatabases } from '../persistence/test-databases.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'mounted-http',
  models: {
    quick: [answer('hello {{prompt}}')],
  },
  agents: {
    assistant: { model: 'quick' },
  },
});

const USERS: Readonly<Record<string, { id?: string; boom?: boolean }>> = {
  'alice-token': { id: 'alice' },
  'bob-token': { id: 'bob' },
  // Signed in to the host, but the host gives such a user no owner.
  'guest-token': {},
  'boom-token': { boom: true },
};

type HostRequest = Request & { user?: { id?: string; boom?: boolean } };

/** The host's own authentication: bearer tokens mapped to users; its public routes marked by our metadata. */
@Injectable()
class HostBearerGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.getAllAndOverride<boolean>(AGENT_HOOKS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<HostRequest>();
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const user = token === undefined ? undefined : USERS[token];
    if (!user) return false;
    request.user = user;
    return true;
  }
}

/** The host's own interceptor: it must run on the mounted routes too. */
@Injectable()
class HostHeaderInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(tap(() => context.switchToHttp().getResponse<Response>().setHeader('x-host-interceptor', 'ran')));
  }
}

/** The host's own catch-all filter, with another shape: our routes keep theirs. */
@Catch()
class HostFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const status = (exception as { getStatus?: () => number }).getStatus?.() ?? 500;
    host.switchToHttp().getResponse<Response>().status(status).json({ hostError: true });
  }
}

@Controller('me')
class HostController {
  @Get()
  me(): { host: true } {
    return { host: true };
  }
}

const { describeEach, databaseFor } = await appDatabases('mounted');

async function bootHost(database: string, dir: string): Promise<NestExpressApplication> {
  @Module({
    imports: [
      AgentHooksModule.forRoot({ isGlobal: true, database, configFile: join(dir, 'agents.yaml') }),
      AgentHooksHttpModule.register({
        path: 'agents',
        owner: (request) => {
          const user = (request as HostRequest).user;
          if (user?.boom) throw new Error('resolver exploded: secret-marker-7731');
          return user?.id;
        },
      }),
    ],
    controllers: [HostController],
    providers: [
      { provide: APP_GUARD, useClass: HostBearerGuard },
      { provide: APP_INTERCEPTOR, useClass: HostHeaderInterceptor },
      { provide: APP_FILTER, useClass: HostFilter },
    ],
  })
  class HostModule {}
  // Run from sources, the console's files are those `npm run build` put in dist/console/.
  const moduleRef = await Test.createTestingModule({ imports: [HostModule] })
    .overrideProvider(CONSOLE_FILES)
    .useFactory({ factory: () => listConsoleFiles(join(process.cwd(), 'dist', 'console')) })
    .compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false, bodyParser: true });
  app.useBodyParser('json', { limit: 4 * 1024 * 1024 });
  await app.listen(0, '127.0.0.1');
  return app;
}

describeEach('G9: the HTTP API and console mounted in a host app on %s', (driver) => {
  let dir: string;
  let app: NestExpressApplication;
  let base: string;
  const as = (token: string) => apiClient(`${base}/agents`, token);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-hooks-mounted-'));
    writeFileSync(join(dir, 'agents.yaml'), CONFIG);
    app = await bootHost(databaseFor(driver, 'mounted'), dir);
    base = await app.getUrl();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('G9: two users see only their own operations through every mounted route, event streams included', async () => {
    const alice = as('alice-token');
    const bob = as('bob-token');
    const started = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'from alice' });
    expect(started.status).toBe(201);
    const id = started.body.operationId as string;
    // The host's interceptor ran on our route.
    expect(started.headers.get('x-host-interceptor')).toBe('ran');
    const done = await until(() => alice.get(`/v1/operations/${id}`), (reply) => reply.body.status === 'completed', 'alice sees her operation complete');
    expect(done.body).toMatchObject({ operationId: id, agentId: 'assistant', status: 'completed', reason: 'done' });
    expect((await alice.get(`/v1/operations/${id}/messages`)).body.messages.map((m: { content: string }) => m.content)).toContain('hello from alice');
    expect((await alice.get(`/v1/operations/${id}/timeline`)).status).toBe(200);
    expect((await alice.get('/v1/operations')).body.items.map((item: { operationId: string }) => item.operationId)).toContain(id);

    // Bob: her operation does not exist for him, on every route.
    for (const path of [`/v1/operations/${id}`, `/v1/operations/${id}/messages`, `/v1/operations/${id}/timeline`, `/v1/operations/${id}/events`]) {
      expectErrorShape(await bob.get(path), 404, 'not_found');
    }
    expectErrorShape(await bob.post(`/v1/operations/${id}/cancel`), 404, 'not_found');
    expect((await bob.get('/v1/operations')).body.items).toEqual([]);

    // Alice's operation stream replays her messages and ends after the completed status.
    const stream = await fetch(`${base}/agents/v1/operations/${id}/events`, { headers: { authorization: 'Bearer alice-token' } });
    expect(stream.status).toBe(200);
    const { events, ended } = await readEvents(stream);
    expect(ended).toBe(true);
    expect(events.some((event) => event.event === 'status' && event.data.status === 'completed')).toBe(true);

    // The caller-wide stream: bob's stream carries his own change, never alice's.
    const bobStream = await fetch(`${base}/agents/v1/events`, { headers: { authorization: 'Bearer bob-token' } });
    expect(bobStream.status).toBe(200);
    const reading = readEvents(bobStream, 8_000);
    const bobsOwn = await bob.post('/v1/operations', { agentId: 'assistant', prompt: 'from bob' });
    const alicesNext = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'again' });
    await until(() => bob.get(`/v1/operations/${bobsOwn.body.operationId}`), (reply) => reply.body.status === 'completed', 'bob sees his operation complete');
    await until(() => alice.get(`/v1/operations/${alicesNext.body.operationId}`), (reply) => reply.body.status === 'completed', 'alice sees hers complete');
    const seen = (await reading).events.map((event) => JSON.stringify(event.data));
    expect(seen.some((data) => data.includes(bobsOwn.body.operationId))).toBe(true);
    expect(seen.some((data) => data.includes(alicesNext.body.operationId) || data.includes(id))).toBe(false);
  }, 60_000);

  it('G9: a request the resolver gives no owner is 401; a resolver that throws is a 500 naming nothing of it', async () => {
    expectErrorShape(await as('guest-token').get('/v1/operations'), 401, 'unauthorized');
    const boom = await as('boom-token').get('/v1/operations');
    expectErrorShape(boom, 500);
    expect(JSON.stringify(boom.body)).not.toContain('secret-marker-7731');
    expect(JSON.stringify(boom.body)).not.toMatch(/at .*\.ts:\d+/);
    // Without the host's sign-in, the host's own guard refuses first (its shape, its status).
    expect((await apiClient(`${base}/agents`).get('/v1/operations')).status).toBe(403);
  });

  it('G9: the mounted routes keep the server limits: a tampered cursor is 400, a deep or large body is refused', async () => {
    const alice = as('alice-token');
    expectErrorShape(await alice.get('/v1/operations?cursor=not-a-cursor'), 400, 'invalid_request');
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const refused = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'deep', context: { metadata: deep } });
    expectErrorShape(refused, 400, 'invalid_request');
    expect(refused.body.error.message).toContain('nested deeper than 64 levels');
    const large = await alice.post('/v1/operations', { agentId: 'assistant', prompt: 'x'.repeat(2 * 1024 * 1024) });
    expectErrorShape(large, 413, 'payload_too_large');
  });

  it('DESIGN §12: the console is served under the prefix; its page and assets pass a bearer-only host guard', async () => {
    const redirect = await fetch(`${base}/agents/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(new URL(redirect.headers.get('location')!, `${base}/agents/console`).pathname).toBe('/agents/console/');
    const page = await fetch(`${base}/agents/console/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${base}/agents/console/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
    // Only the console's files are public: the API behind them is not.
    expect((await fetch(`${base}/agents/v1/operations`)).status).toBe(403);
    const missing = await fetch(`${base}/agents/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('DESIGN §12: the routes join the host Swagger document under its prefix', () => {
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().setTitle('host').build());
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/agents/v1/operations', '/agents/v1/operations/{id}', '/me']));
    expect(Object.keys(document.paths).some((path) => path.includes('console'))).toBe(false);
  });
});

describe('DESIGN §12: mounting without the core module', () => {
  it('is a clear error at bootstrap naming the fix', async () => {
    @Module({ imports: [AgentHooksHttpModule.register({ path: 'agents', owner: () => 'x' })] })
    class Lonely {}
    await expect(NestFactory.createApplicationContext(Lonely, { logger: false, abortOnError: false })).rejects.toThrow(AgentHooksHttpModuleError);
    await expect(NestFactory.createApplicationContext(Lonely, { logger: false, abortOnError: false })).rejects.toThrow(/isGlobal: true/);
  });
});
