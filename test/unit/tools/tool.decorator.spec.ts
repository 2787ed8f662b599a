/** @Tool discovery at bootstrap (DESIGN §6), including bad usage failing the start with class and method named. */
import { Injectable, Scope, type Type } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { LocalToolRegistry } from '../../../src/runtime/tools/local-tool.registry.js';
import { ToolCatalogService } from '../../../src/runtime/tools/tool-catalog.service.js';
import { ToolConfigurationError } from '../../../src/runtime/tools/tool-errors.js';
import { TOOL_CATALOG } from '../../../src/runtime/tools/tool-types.js';
import { bootTools, compileTools } from './tools-boot.js';

const OBJECT = { type: 'object' } as const;

@Injectable()
class ClockTools {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'The time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } })
  now(): string {
    return '12:00';
  }

  // Stacked: one method offered under two names.
  @Tool({ identifier: 'clock', apiName: 'today', description: 'The date', parameters: OBJECT, requiresApproval: true })
  @Tool({ identifier: 'clock', apiName: 'date', description: 'The date', parameters: OBJECT, deferred: true, timeoutMs: 500 })
  today(): string {
    return '2026-01-01';
  }

  notATool(): string {
    return 'ignored';
  }
}

let created = 0;

@Injectable({ scope: Scope.REQUEST })
class ScopedTools {
  readonly instance = ++created;

  @Tool({ identifier: 'scoped', apiName: 'who', description: 'Which instance ran', parameters: OBJECT })
  who(): string {
    return String(this.instance);
  }
}

async function expectBootFailure(providers: Type[], ...fragments: string[]): Promise<void> {
  const moduleRef = await compileTools(providers);
  try {
    const failure = await moduleRef.init().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ToolConfigurationError);
    for (const fragment of fragments) expect((failure as Error).message).toContain(fragment);
  } finally {
    await moduleRef.close().catch(() => undefined);
  }
}

describe('tools: @Tool discovery', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    moduleRef = await bootTools([ClockTools, ScopedTools]);
  });

  afterAll(async () => {
    await moduleRef.close();
  });

  it('registers every decorated method, stacked decorators as separate tools, with defaults filled in', () => {
    const registry = moduleRef.get(LocalToolRegistry);
    const names = registry.all().map((tool) => `${tool.definition.identifier}/${tool.definition.apiName}`);
    expect(names).toEqual(expect.arrayContaining(['clock/now', 'clock/today', 'clock/date', 'scoped/who']));
    expect(names).toHaveLength(4);
    expect(registry.get('clock', 'now')!.definition).toEqual({
      identifier: 'clock',
      apiName: 'now',
      description: 'The time',
      parameters: { type: 'object', properties: { tz: { type: 'string' } } },
      requiresApproval: false,
      deferred: false,
      source: 'local',
    });
    expect(registry.get('clock', 'today')!.definition).toMatchObject({ requiresApproval: true, deferred: false });
    expect(registry.get('clock', 'date')!.definition).toMatchObject({ deferred: true, timeoutMs: 500 });
    expect(registry.get('clock', 'date')!.origin).toBe('ClockTools.today');
  });

  it('TOOL_CATALOG is the catalog service', () => {
    expect(moduleRef.get(TOOL_CATALOG)).toBe(moduleRef.get(ToolCatalogService));
  });

  it('runs tools of request-scoped providers on a fresh instance per call', async () => {
    const catalog = moduleRef.get(ToolCatalogService);
    const tool = (await catalog.find('scoped', 'who'))!;
    const invocation = { operationId: 'op', toolCallId: 'c', idempotencyKey: 'k', signal: new AbortController().signal };
    const first = await catalog.execute(tool, {}, invocation);
    const second = await catalog.execute(tool, {}, invocation);
    expect(Number(second.content)).toBeGreaterThan(Number(first.content));
  });
});

describe('tools: bad @Tool usage fails the bootstrap, naming class and method', () => {
  it('an identifier outside [A-Za-z0-9_.-]', async () => {
    @Injectable()
    class BadIdentifierTools {
      @Tool({ identifier: 'my tools', apiName: 'run', description: '', parameters: OBJECT })
      run(): string {
        return '';
      }
    }
    await expectBootFailure([BadIdentifierTools], 'BadIdentifierTools.run', 'identifier');
  });

  it('an apiName with a slash', async () => {
    @Injectable()
    class BadApiNameTools {
      @Tool({ identifier: 'fs', apiName: 'read/file', description: '', parameters: OBJECT })
      read(): string {
        return '';
      }
    }
    await expectBootFailure([BadApiNameTools], 'BadApiNameTools.read', 'apiName');
  });

  it('parameters that do not compile with ajv (an invalid type, a misspelt keyword)', async () => {
    @Injectable()
    class BadTypeTools {
      @Tool({ identifier: 'x', apiName: 'y', description: '', parameters: { type: 'object', properties: { a: { type: 'nonsense' } } } })
      y(): string {
        return '';
      }
    }
    await expectBootFailure([BadTypeTools], 'BadTypeTools.y', 'not a valid JSON Schema');

    @Injectable()
    class TypoTools {
      @Tool({ identifier: 'x', apiName: 'z', description: '', parameters: { type: 'object', requird: ['a'] } })
      z(): string {
        return '';
      }
    }
    await expectBootFailure([TypoTools], 'TypoTools.z', 'requird');
  });

  it('parameters that are not an object schema', async () => {
    @Injectable()
    class StringSchemaTools {
      @Tool({ identifier: 'x', apiName: 'y', description: '', parameters: { type: 'string' } })
      y(): string {
        return '';
      }
    }
    await expectBootFailure([StringSchemaTools], 'StringSchemaTools.y', "type: 'object'");
  });

  it('a timeoutMs that is not a positive number', async () => {
    @Injectable()
    class BadTimeoutTools {
      @Tool({ identifier: 'x', apiName: 'y', description: '', parameters: OBJECT, timeoutMs: -5 })
      y(): string {
        return '';
      }
    }
    await expectBootFailure([BadTimeoutTools], 'BadTimeoutTools.y', 'timeoutMs');
  });

  it.each([
    ['an absurd timeoutMs', { timeoutMs: 1e12 }, 'timeoutMs'],
    ['a fractional timeoutMs', { timeoutMs: 1.5 }, 'timeoutMs'],
    ['retry on a tool not declared idempotent', { retry: { attempts: 3 } }, 'idempotent tools only'],
    ['retry with idempotent: false', { idempotent: false, retry: { attempts: 3 } }, 'idempotent tools only'],
    ['retry attempts out of range', { idempotent: true, retry: { attempts: 0 } }, 'retry.attempts'],
    ['an unknown retry key', { idempotent: true, retry: { attempts: 2, jitter: 'none' } }, 'retry.jitter'],
    ['idempotent that is not a boolean', { idempotent: 'yes' }, 'idempotent must be a boolean'],
  ])('F3: %s is a bootstrap error naming class and method', async (_what, effects, fragment) => {
    @Injectable()
    class EffectTools {
      @Tool({ identifier: 'x', apiName: 'y', description: '', parameters: OBJECT, ...(effects as object) })
      y(): string {
        return '';
      }
    }
    await expectBootFailure([EffectTools], 'EffectTools.y', fragment);
  });

  it('the same identifier/apiName twice across the app names both methods', async () => {
    @Injectable()
    class FirstTools {
      @Tool({ identifier: 'dup', apiName: 'x', description: '', parameters: OBJECT })
      one(): string {
        return '';
      }
    }
    @Injectable()
    class SecondTools {
      @Tool({ identifier: 'dup', apiName: 'x', description: '', parameters: OBJECT })
      two(): string {
        return '';
      }
    }
    await expectBootFailure([FirstTools, SecondTools], 'dup/x', 'FirstTools.one', 'SecondTools.two');
  });

  it('a local identifier that is also a configured MCP server id', async () => {
    @Injectable()
    class ShadowTools {
      @Tool({ identifier: 'kb', apiName: 'search', description: '', parameters: OBJECT })
      search(): string {
        return '';
      }
    }
    const moduleRef = await compileTools([ShadowTools], { mcpConnectTimeoutMs: 500 }, { kb: { url: 'http://127.0.0.1:1/mcp' } });
    try {
      await expect(moduleRef.init()).rejects.toThrow(/ShadowTools\.search: identifier kb is also the id of a configured MCP server/);
    } finally {
      await moduleRef.close().catch(() => undefined);
    }
  });
});
