/** `AgentHooksHttpModule.register(…)` (DESIGN §12, fixed names): where the routes go and whose they are. */
import type { Request } from 'express';

export interface AgentHooksHttpOptions {
  /** The host's prefix for the routes: `agents` serves `/agents/v1/operations` and `/agents/console/`. */
  path: string;
  /**
   * The owner of the request (SPEC G9), from the host's own authentication (a session, a bearer token its
   * guard checked). `undefined` is a 401; a throw is a 500 whose body names nothing of it, and is logged.
   */
  owner: (request: Request) => string | undefined | Promise<string | undefined>;
  /** Default true: the operations console under `<path>/console/`. */
  console?: boolean;
  /** Variable names a caller hook may list in `allowedEnvVars` (default none), as `AGENT_HOOKS_CALLER_ENV` does for the server. */
  callerEnvAllowlist?: readonly string[];
}

export const AGENT_HOOKS_HTTP_OPTIONS = Symbol('nest-agent-hooks:AgentHooksHttpOptions');
