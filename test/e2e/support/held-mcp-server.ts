/**
 * A real MCP server (the SDK's McpServer over streamable HTTP, stateful sessions, no auth) run by a test
 * for `agentctl serve` child processes: its tools are the "plain tools" of the crash tests, executed by the
 * server, observed and held by the test. The built server has no way to load a local tool from a plugin
 * (plugins are hook classes, created outside Nest, so `@Tool` on them is never discovered), so an MCP tool is
 * the tool a black-box test can both run and watch.
 *
 * - `held { tag }`: records the execution, then answers `held <tag>: done` once the test releases that tag
 *   (`release(tag)`, `releaseAll()`); a released tag answers at once from then on.
 * - `work { op, step }`: records start and end of every execution (for the overlap check), answers
 *   `work <op>/<step>` after `workMs`.
 * Every execution is recorded with the server's `label`, so a test with one MCP server per process knows
 * which process ran it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { McpSessions, readJsonBody } from '../../integration/mcp/mcp-sessions.js';

export interface ToolExecution {
  tool: 'held' | 'work';
  /** The `label` of the MCP server that ran it. */
  label: string;
  /** `held`: its tag; `work`: `op`. */
  key: string;
  /** `work` only. */
  step?: number;
  startedAt: number;
  /** Once the handler answered (the caller may be gone by then). */
  endedAt?: number;
}

export interface HeldMcpServer {
  readonly url: string;
  readonly label: string;
  /** Every execution so far, in arrival order. */
  readonly executions: ToolExecution[];
  /** Executions of `held` with this tag so far. */
  arrivals(tag: string): number;
  /** Resolves once `count` executions of `held` with `tag` arrived (rejects after `timeoutMs`). */
  untilArrivals(tag: string, count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once `count` executions of `work` have started here. */
  untilWorkStarted(count: number, timeoutMs?: number): Promise<void>;
  /** Lets the held calls of `tag` (and later ones) answer. */
  release(tag: string): void;
  /** Lets every held call (and every later one) answer. */
  releaseAll(): void;
  close(): Promise<void>;
}

export interface HeldMcpOptions {
  label?: string;
  /** How long a `work` call takes (default 300 ms). */
  workMs?: number;
}

interface Gate {
  release: () => void;
  opened: Promise<void>;
}

export async function startHeldMcpServer(options: HeldMcpOptions = {}): Promise<HeldMcpServer> {
  const label = options.label ?? 'mcp';
  const workMs = options.workMs ?? 300;
  const executions: ToolExecution[] = [];
  const gates = new Map<string, Gate>();
  let allReleased = false;
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const gate = (tag: string): Gate => {
    let found = gates.get(tag);
    if (!found) {
      let release!: () => void;
      const opened = new Promise<void>((resolve) => (release = resolve));
      const created: Gate = { opened, release };
      if (allReleased) created.release();
      gates.set(tag, created);
      found = created;
    }
    return found;
  };
  const waitFor = (check: () => boolean, what: string, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (check()) return resolve();
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`${label}: ${what} did not happen within ${timeoutMs} ms (executions: ${JSON.stringify(executions)})`));
      }, timeoutMs);
      const waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        waiters.delete(waiter);
        resolve();
      };
      waiters.add(waiter);
    });

  const buildServer = (): McpServer => {
    const server = new McpServer({ name: `held-${label}`, version: '1.0.0' });
    server.registerTool('held', { description: 'Answers once the test releases its tag', inputSchema: { tag: z.string() } }, async ({ tag }) => {
      const execution: ToolExecution = { tool: 'held', label, key: tag, startedAt: Date.now() };
      executions.push(execution);
      changed();
      await gate(tag).opened;
      execution.endedAt = Date.now();
      return { content: [{ type: 'text', text: `held ${tag}: done` }] };
    });
    server.registerTool('work', { description: 'Takes a moment, reports start and end', inputSchema: { op: z.string(), step: z.number() } }, async ({ op, step }) => {
      const execution: ToolExecution = { tool: 'work', label, key: op, step, startedAt: Date.now() };
      executions.push(execution);
      changed();
      await new Promise((resolve) => setTimeout(resolve, workMs));
      execution.endedAt = Date.now();
      return { content: [{ type: 'text', text: `work ${op}/${step}` }] };
    });
    return server;
  };

  const sessions = new McpSessions(buildServer);
  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
      await sessions.handle(req, res, body);
    })().catch(() => {
      // A caller killed mid-call: its answer has nowhere to go.
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const heldArrivals = (tag: string) => executions.filter((e) => e.tool === 'held' && e.key === tag).length;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    label,
    executions,
    arrivals: heldArrivals,
    untilArrivals: (tag, count, timeoutMs = 30_000) => waitFor(() => heldArrivals(tag) >= count, `${count} call(s) of held { tag: ${tag} }`, timeoutMs),
    untilWorkStarted: (count, timeoutMs = 30_000) => waitFor(() => executions.filter((e) => e.tool === 'work').length >= count, `${count} work call(s)`, timeoutMs),
    release: (tag) => gate(tag).release(),
    releaseAll: () => {
      allReleased = true;
      for (const held of gates.values()) held.release();
    },
    close: async () => {
      allReleased = true;
      for (const held of gates.values()) held.release();
      await sessions.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
