/**
 * Where a tool call goes before it runs (DESIGN §8, Runtime II): `deferred` — an outside executor runs it
 * (`@Tool({ deferred: true })` or the agent's `deferred` regexes); `approval` — a human decides first
 * (`requiresApproval` or the agent's `approval` regexes); otherwise it runs here. A deferred call is not
 * also held for approval: whoever executes it outside is the one who decides.
 */
import { Injectable } from '@nestjs/common';
import { compileMatcher, toolNameOf, type ToolMatcher } from '../hooks/matcher.js';
import type { ResolvedAgent } from './agent-directory.port.js';
import type { ModelToolCall } from './models/chat-model.js';
import type { ToolDefinition } from './tools/tool-types.js';

export type CallRoute = 'run' | 'approval' | 'deferred';

const MATCH_ALL: ToolMatcher = { source: '*', test: () => true };

interface CompiledRoutes {
  approval: ToolMatcher[];
  deferred: ToolMatcher[];
}

@Injectable()
export class CallRouter {
  /** Compiled once per resolved agent (the directory hands out the same object for the app's life). */
  private readonly compiled = new WeakMap<ResolvedAgent, CompiledRoutes>();

  route(agent: ResolvedAgent, tool: ToolDefinition | undefined, call: Pick<ModelToolCall, 'identifier' | 'apiName'>): CallRoute {
    // The sub-agent tool has its own wait (the child); the child's own tools are where approval applies.
    if (tool?.source === 'agent') return 'run';
    const routes = this.routesOf(agent);
    const name = toolNameOf(call.identifier, call.apiName);
    if (tool?.deferred || routes.deferred.some((m) => m.test(name))) return 'deferred';
    if (tool?.requiresApproval || routes.approval.some((m) => m.test(name))) return 'approval';
    return 'run';
  }

  private routesOf(agent: ResolvedAgent): CompiledRoutes {
    let routes = this.compiled.get(agent);
    if (!routes) {
      // Like hook matchers (W5): unanchored, and '' or '*' matches every tool.
      const compile = (patterns: readonly string[], key: string) =>
        patterns.map((p, i) => compileMatcher(p, `agents.${agent.id}.${key}[${i}]`) ?? MATCH_ALL);
      routes = { approval: compile(agent.approval, 'approval'), deferred: compile(agent.deferred, 'deferred') };
      this.compiled.set(agent, routes);
    }
    return routes;
  }
}
