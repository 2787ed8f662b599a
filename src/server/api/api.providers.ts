/** The HTTP API's controllers and providers, for `ServerModule` (DESIGN §7). */
import type { Provider, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ApiExceptionFilter } from './api-exception.filter.js';
import { ApiKeyCallerResolver } from './api-key-caller.resolver.js';
import { CALLER_RESOLVER } from './caller-resolver.js';
import { CallerGuard } from './caller.guard.js';
import { CallerEventStreams } from './caller-event-stream.js';
import { CallerEventsController } from './caller-events.controller.js';
import { OperationDecisionsController } from './operation-decisions.controller.js';
import { OperationEventStreams } from './operation-event-stream.js';
import { OperationEventsController } from './operation-events.controller.js';
import { OperationReader } from './operation-reader.js';
import { OperationsController } from './operations.controller.js';
import { SERVER_API_OPTIONS, type ServerApiOptions } from './server-api.options.js';

export const API_CONTROLLERS: Type[] = [OperationsController, OperationDecisionsController, OperationEventsController, CallerEventsController];

export function apiProviders(options: ServerApiOptions): Provider[] {
  return [
    { provide: SERVER_API_OPTIONS, useValue: options },
    // One filter for every route (health and metrics too) and for unknown paths: one error shape.
    { provide: APP_FILTER, useClass: ApiExceptionFilter },
    { provide: CALLER_RESOLVER, useClass: ApiKeyCallerResolver },
    CallerGuard,
    OperationReader,
    OperationEventStreams,
    CallerEventStreams,
  ];
}
