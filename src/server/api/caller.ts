/**
 * Who is calling: the owner id of the API key (DESIGN §7). Kept per request object by the guard and
 * read by `@CurrentCaller()`; a WeakMap, so nothing outlives the request.
 */
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

export interface Caller {
  ownerId: string;
  /**
   * False when no keys are configured: the server then serves loopback only, for one local user, who
   * sees every operation of the database (those `agentctl run` started too).
   */
  authenticated: boolean;
}

/** The owner id of operations (and `context.userId`) when auth is off. */
export const LOCAL_OWNER = 'local';

const callers = new WeakMap<object, Caller>();

export function setCaller(request: object, caller: Caller): void {
  callers.set(request, caller);
}

/** The request's caller; a route without the guard has none, which is a programming error. */
export function callerOf(request: object): Caller {
  const caller = callers.get(request);
  if (!caller) throw new Error('no caller on this request: the route is missing CallerGuard');
  return caller;
}

export const CurrentCaller = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => callerOf(context.switchToHttp().getRequest<object>()));
