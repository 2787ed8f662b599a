/** Starts the host service: `npm run migrate && npm start` (PORT, HOST, DATABASE_URL, DATABASE_SCHEMA, HOST_USERS). */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';

const app = await NestFactory.create<NestExpressApplication>(AppModule);
// SIGTERM closes the app: running agent steps finish or are handed back, then the DataSource closes.
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
console.log(`host-app listening on ${await app.getUrl()}`);
