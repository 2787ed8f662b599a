/** ToolCatalogService over local tools: patterns, find, and execute's validation, timeouts, cancellation and results. */
import { Injectable } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { RunContext } from '../../../src/index.js';
import type { LocalToolContext } from '../../../src/runtime/tools/local-tool.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { ToolCatalogService } from '../../../src/runtime/tools/tool-catalog.service.js';
import { ToolError, type ToolDefinition, type ToolInvocation } from '../../../src/runtime/tools/tool-types.js';
import { bootTools } from './tools-boot.js';

const OBJECT = { type: 'object' } as const;

class DiskFullError extends Error {
  override readonly name = 'DiskFullError';
}

@Injectable()
class TestTools {
  readonly signals: AbortSignal[] = [];
  readonly contexts: LocalToolContext[] = [];
  calls = 0;

  @Tool({ identifier: 'clock', apiName: 'now', description: 'The time', parameters: OBJECT })
  now(): string {
    this.calls++;
    return '2026-01-01T12:00:00Z';
  }

  @Tool({ identifier: 'clock', apiName: 'parts', description: 'The time in parts', parameters: OBJECT })
  parts(): unknown {
    return { hour: 12, minute: 0 };
  }

  @Tool({ identifier: 'clock', apiName: 'blocked', description: 'A tool result with its own state', parameters: OBJECT })
  blocked(): unknown {
    return { content: 'not now', success: false, state: { type: 'blocked' }, data: { retryAfter: 5 } };
  }

  @Tool({
    identifier: 'math',
    apiName: 'divide',
    description: 'a / b',
    parameters: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer', minimum: 1 }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
      required: ['a', 'b'],
      additionalProperties: false,
    },
  })
  divide(args: Record<string, unknown>): string {
    return String((args.a as number) / (args.b as number));
  }

  @Tool({ identifier: 'disk', apiName: 'write', description: 'Always fails', parameters: OBJECT })
  write(): never {
    throw new DiskFullError('disk is full');
  }

  @Tool({ identifier: 'disk', apiName: 'refuse', description: 'Refuses with a ToolError', parameters: OBJECT })
  refuse(): never {
    throw new ToolError('invalid_arguments', 'path is outside the workspace');
  }

  @Tool({ identifier: 'slow', apiName: 'wait', description: 'Waits for its signal', parameters: OBJECT, timeoutMs: 50 })
  wait(_args: unknown, context: LocalToolContext): Promise<string> {
    this.signals.push(context.signal);
    return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve('late')));
  }

  @Tool({ identifier: 'slow', apiName: 'forever', description: 'Never answers, ignores its signal', parameters: OBJECT })
  forever(): Promise<string> {
    return new Promise(() => undefined);
  }

  @Tool({ identifier: 'ctx', apiName: 'echo', description: 'Echoes its context', parameters: OBJECT })
  echo(_args: unknown, context: LocalToolContext): unknown {
    this.contexts.push(context);
    return { operationId: context.operationId, toolCallId: context.toolCallId, runId: context.runContext?.runId ?? null };
  }
}

let moduleRef: TestingModule;
let catalog: ToolCatalogService;
let tools: TestTools;

beforeAll(async () => {
  moduleRef = await bootTools([TestTools], { defaultTimeoutMs: 120 });
  catalog = moduleRef.get(ToolCatalogService);
  tools = moduleRef.get(TestTools);
});

afterAll(async () => {
  await moduleRef.close();
});

function invocation(signal: AbortSignal = new AbortController().signal): ToolInvocation {
  return { operationId: 'op-1', toolCallId: 'call-1', idempotencyKey: 'key-1', signal };
}

async function tool(identifier: string, apiName: string): Promise<ToolDefinition> {
  const found = await catalog.find(identifier, apiName);
  if (!found) throw new Error(`no tool ${identifier}/${apiName}`);
  return found;
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

const names = (list: ToolDefinition[]) => list.map((t) => `${t.identifier}/${t.apiName}`);

describe('tools: toolsFor and find', () => {
  it('a glob selects every matching tool, in registration order', async () => {
    expect(names(await catalog.toolsFor(['clock/*']))).toEqual(['clock/now', 'clock/parts', 'clock/blocked']);
  });

  it('an exact name selects one tool; * selects all; overlapping entries do not duplicate', async () => {
    expect(names(await catalog.toolsFor(['math/divide']))).toEqual(['math/divide']);
    const all = names(await catalog.toolsFor(['*']));
    expect(all).toHaveLength(9);
    expect(names(await catalog.toolsFor(['clock/now', 'clock/*', 'clock/now']))).toEqual(['clock/now', 'clock/parts', 'clock/blocked']);
  });

  it('an unknown mcp:<server> or an unmatched glob selects nothing', async () => {
    expect(await catalog.toolsFor(['mcp:nowhere'])).toEqual([]);
    expect(await catalog.toolsFor(['fs/*'])).toEqual([]);
  });

  it('find answers local tools and nothing for unknown names', async () => {
    expect((await catalog.find('clock', 'now'))?.source).toBe('local');
    expect(await catalog.find('clock', 'later')).toBeUndefined();
    expect(await catalog.find('kb', 'search')).toBeUndefined();
  });
});

describe('tools: execute — results', () => {
  it('a string becomes { content, success: true } with an executionTime', async () => {
    const result = await catalog.execute(await tool('clock', 'now'), {}, invocation());
    expect(result).toMatchObject({ content: '2026-01-01T12:00:00Z', success: true });
    expect(typeof result.executionTime).toBe('number');
  });

  it('other values are JSON-stringified; a ToolResult-like object keeps success, state and data', async () => {
    expect((await catalog.execute(await tool('clock', 'parts'), {}, invocation())).content).toBe('{"hour":12,"minute":0}');
    expect(await catalog.execute(await tool('clock', 'blocked'), {}, invocation())).toMatchObject({
      content: 'not now',
      success: false,
      state: { type: 'blocked' },
      data: { retryAfter: 5 },
    });
  });

  it('the tool receives operationId, toolCallId, a signal and the run context', async () => {
    const runContext = new RunContext({ runId: 'run-7' });
    const result = await catalog.execute(await tool('ctx', 'echo'), {}, { operationId: 'op-9', toolCallId: 'call-9', idempotencyKey: 'key-9', signal: new AbortController().signal, runContext });
    expect(JSON.parse(result.content)).toEqual({ operationId: 'op-9', toolCallId: 'call-9', runId: 'run-7' });
    expect(tools.contexts.at(-1)!.signal).toBeInstanceOf(AbortSignal);
  });
});

describe('tools: execute — invalid arguments (ajv)', () => {
  const SECRET = 'SECRET-ARG-VALUE-4242';

  it('invalid args → invalid_arguments naming the rules, never the values', async () => {
    const error = await failure(
      catalog.execute(await tool('math', 'divide'), { a: SECRET, b: 0, labels: { [`key-${SECRET}`]: 7 } } as never, invocation()),
    );
    expect(error.code).toBe('invalid_arguments');
    expect(error.message).toContain('math/divide');
    expect(error.message).toContain('/a must be integer');
    expect(error.message).toContain('/b must be >= 1');
    // a free-form map key comes from the caller: masked
    expect(error.message).toContain('/labels/* must be string');
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain('4242');
  });

  it('missing required and additional properties are named by the schema, not the data', async () => {
    const error = await failure(catalog.execute(await tool('math', 'divide'), { a: 1, [SECRET]: true }, invocation()));
    expect(error.code).toBe('invalid_arguments');
    expect(error.message).toContain("(root) must have required property 'b'");
    expect(error.message).toContain('(root) must NOT have additional properties');
    expect(error.message).not.toContain(SECRET);
  });

  it('arguments that are not an object are invalid; the tool never runs', async () => {
    const before = tools.calls;
    const error = await failure(catalog.execute(await tool('clock', 'now'), ['x'] as never, invocation()));
    expect(error.code).toBe('invalid_arguments');
    expect(tools.calls).toBe(before);
  });

  it('valid args run the tool', async () => {
    expect((await catalog.execute(await tool('math', 'divide'), { a: 9, b: 3 }, invocation())).content).toBe('3');
  });
});

describe('tools: execute — failures, timeouts, cancellation', () => {
  it('a thrown error becomes execution_failed with the original class name as errorType', async () => {
    const error = await failure(catalog.execute(await tool('disk', 'write'), {}, invocation()));
    expect(error.code).toBe('execution_failed');
    expect(error.errorType).toBe('DiskFullError');
    expect(error.message).toBe('disk/write failed: disk is full');
    expect(error.cause).toBeInstanceOf(DiskFullError);
  });

  it("a tool's own ToolError passes through unchanged", async () => {
    const error = await failure(catalog.execute(await tool('disk', 'refuse'), {}, invocation()));
    expect(error.code).toBe('invalid_arguments');
    expect(error.message).toBe('path is outside the workspace');
  });

  it("the tool's timeoutMs → timeout, and the tool's signal is aborted", async () => {
    const started = performance.now();
    const error = await failure(catalog.execute(await tool('slow', 'wait'), {}, invocation()));
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('slow/wait timed out after 50 ms');
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(tools.signals.at(-1)!.aborted).toBe(true);
  });

  it('the default timeout applies to a tool without its own, even one ignoring its signal', async () => {
    const error = await failure(catalog.execute(await tool('slow', 'forever'), {}, invocation()));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('120 ms');
  });

  it('an AbortSignal already aborted → cancelled without running the tool', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = tools.calls;
    const error = await failure(catalog.execute(await tool('clock', 'now'), {}, invocation(controller.signal)));
    expect(error.code).toBe('cancelled');
    expect(tools.calls).toBe(before);
  });

  it('aborting mid-run → cancelled at once, and the abort reaches the tool', async () => {
    const controller = new AbortController();
    const entered = tools.signals.length;
    const running = catalog.execute({ ...(await tool('slow', 'wait')), timeoutMs: 10_000 }, {}, invocation(controller.signal));
    // Mid-run: the tool has been entered (it records its signal) and waits.
    while (tools.signals.length === entered) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await failure(running);
    expect(error.code).toBe('cancelled');
    expect(tools.signals.at(-1)!.aborted).toBe(true);
  });

  it('a definition the catalog cannot run → not_found', async () => {
    const stranger: ToolDefinition = { identifier: 'agents', apiName: 'call', description: '', parameters: OBJECT, requiresApproval: false, deferred: false, source: 'agent' };
    expect((await failure(catalog.execute(stranger, {}, invocation()))).code).toBe('not_found');
  });
});
