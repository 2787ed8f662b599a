// The ceiling for bench:server: a bare Nest app (same framework, same platform-express) whose
// POST /v1/operations answers 201 with no work. Prints `listening on http://HOST:PORT ` on stdout.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

class BareController {
  create() {
    return { operationId: randomUUID(), status: 'running' };
  }
}
const create = Object.getOwnPropertyDescriptor(BareController.prototype, 'create');
Post()(BareController.prototype, 'create', create);
HttpCode(201)(BareController.prototype, 'create', create);
Controller('v1/operations')(BareController);

class BareModule {}
Module({ controllers: [BareController] })(BareModule);

const app = await NestFactory.create(BareModule, { logger: false });
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
process.stdout.write(`listening on http://127.0.0.1:${port} (pid ${process.pid})\n`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
