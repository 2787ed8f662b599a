/**
 * W6 / S2: header values are `${VAR}` templates, expanded only at send time and only from `allowedEnvVars`;
 * every problem is a `configuration` error that names the header or variable and never a value. A
 * distinctive secret sits in every environment and template here and must be absent from every message.
 */
import fc from 'fast-check';
import { HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { checkHeaderTemplates, resolveHeaders } from '../../../src/webhooks/header-template.js';
import { WebhookError } from '../../../src/webhooks/webhook-error.js';

const SECRET = 'sk-live-DISTINCTIVE-41b7e0c9';
const ROTATED = 'sk-live-ROTATED-0d3f55aa';
const VAR = 'W6_TEST_HOOK_TOKEN';

/** The configuration error thrown by `work`, with the given names in its message and no secret. */
function configurationError(work: () => unknown, ...names: string[]): WebhookError {
  let caught: unknown;
  try {
    work();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(WebhookError);
  const error = caught as WebhookError;
  expect(error.code).toBe('configuration');
  for (const name of names) expect(error.message).toContain(name);
  expect(error.message).not.toContain(SECRET);
  expect(error.message).not.toContain('DISTINCTIVE');
  expect(error.message).not.toContain(SECRET.slice(0, 12));
  return error;
}

const env = (values: Record<string, string>): NodeJS.ProcessEnv => ({ ...values });

describe('W6 resolveHeaders: expansion', () => {
  it('W6: an allowed, set variable is expanded', () => {
    expect(resolveHeaders({ Authorization: `Bearer \${${VAR}}` }, [VAR], env({ [VAR]: SECRET }))).toEqual({
      Authorization: `Bearer ${SECRET}`,
    });
  });

  it('W6: several variables and literal text; a bare $ or $NAME stays literal', () => {
    const headers = { 'X-Pair': '${A}:${B}', 'X-Literal': 'cost $5 and $A too', 'X-Team': 'platform' };
    expect(resolveHeaders(headers, ['A', 'B'], env({ A: 'one', B: 'two' }))).toEqual({
      'X-Pair': 'one:two',
      'X-Literal': 'cost $5 and $A too',
      'X-Team': 'platform',
    });
  });

  it('W6: no headers resolve to an empty object', () => {
    expect(resolveHeaders(undefined, undefined, env({}))).toEqual({});
    expect(resolveHeaders({}, [VAR], env({ [VAR]: SECRET }))).toEqual({});
  });

  it('W6: a value from the environment is never expanded a second time', () => {
    configurationError(() => resolveHeaders({ 'X-T': `\${${VAR}}` }, [VAR, 'OTHER'], env({ [VAR]: `${SECRET}\${OTHER}`, OTHER: 'x' })), '"X-T"', '${', VAR);
  });

  it('W6: rotation — the current process.env is read on every call', () => {
    const saved = process.env[VAR];
    try {
      process.env[VAR] = SECRET;
      const headers = { Authorization: `Bearer \${${VAR}}` };
      expect(resolveHeaders(headers, [VAR])).toEqual({ Authorization: `Bearer ${SECRET}` });
      process.env[VAR] = ROTATED;
      expect(resolveHeaders(headers, [VAR])).toEqual({ Authorization: `Bearer ${ROTATED}` });
      delete process.env[VAR];
      configurationError(() => resolveHeaders(headers, [VAR]), VAR, 'not set');
    } finally {
      if (saved === undefined) delete process.env[VAR];
      else process.env[VAR] = saved;
    }
  });

  it('W6: the result has own properties only (no prototype tricks)', () => {
    const resolved = resolveHeaders({ 'X-A': 'a' }, [], env({}));
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(Object.keys(resolved)).toEqual(['X-A']);
  });
});

describe('W6 resolveHeaders: the send-time checks, remembered per configuration', () => {
  it('W6: a headers object changed in place after a send is checked anew: a forbidden header or a new variable is refused', () => {
    const headers: Record<string, string> = { Authorization: `Bearer \${${VAR}}` };
    const allowed = [VAR];
    expect(resolveHeaders(headers, allowed, env({ [VAR]: SECRET }))).toEqual({ Authorization: `Bearer ${SECRET}` });
    headers['Host'] = 'evil.example.com';
    configurationError(() => resolveHeaders(headers, allowed, env({ [VAR]: SECRET })), '"Host"', 'forbidden');
    delete headers['Host'];
    headers['Authorization'] = `Bearer \${OTHER}`;
    configurationError(() => resolveHeaders(headers, allowed, env({ [VAR]: SECRET, OTHER: 'x' })), 'OTHER', 'allowedEnvVars');
  });

  it('W6: an allow-list changed in place after a send is checked anew', () => {
    const headers = { Authorization: `Bearer \${${VAR}}` };
    const allowed = [VAR];
    expect(resolveHeaders(headers, allowed, env({ [VAR]: SECRET }))).toEqual({ Authorization: `Bearer ${SECRET}` });
    allowed[0] = 'OTHER';
    configurationError(() => resolveHeaders(headers, allowed, env({ [VAR]: SECRET })), VAR, 'allowedEnvVars');
  });

  it('W6: configurations that would read alike when joined are told apart (an allow-list of one odd name allows nothing else)', () => {
    const headers = { 'X-A': '${A}' };
    expect(resolveHeaders(headers, ['A', 'B'], env({ A: 'a' }))).toEqual({ 'X-A': 'a' });
    configurationError(() => resolveHeaders(headers, ['A\0B'], env({ A: 'a' })), 'A', 'allowedEnvVars');
    configurationError(() => resolveHeaders(headers, ['A:B'], env({ A: 'a' })), 'A', 'allowedEnvVars');
  });

  it('W6: a header whose value is read at every send still refuses a variable that turned invalid', () => {
    const headers = { Authorization: `Bearer \${${VAR}}` };
    expect(resolveHeaders(headers, [VAR], env({ [VAR]: SECRET }))).toEqual({ Authorization: `Bearer ${SECRET}` });
    configurationError(() => resolveHeaders(headers, [VAR], env({ [VAR]: `${SECRET}\r\nX-Evil: 1` })), '"Authorization"', 'CR, LF or NUL', VAR);
  });
});

describe('W6 resolveHeaders: variables', () => {
  it('W6: a variable not in allowedEnvVars is an error naming it, even when set', () => {
    configurationError(() => resolveHeaders({ Authorization: `Bearer \${${VAR}}` }, ['OTHER'], env({ [VAR]: SECRET })), VAR, 'allowedEnvVars');
    configurationError(() => resolveHeaders({ Authorization: `Bearer \${${VAR}}` }, undefined, env({ [VAR]: SECRET })), VAR);
  });

  it('W6: an unset variable is an error naming it', () => {
    configurationError(() => resolveHeaders({ Authorization: `${SECRET} \${${VAR}}` }, [VAR], env({})), VAR, 'not set');
  });

  it('W6: a variable named like an inherited property (constructor, toString) is unset unless the environment has it', () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      configurationError(() => resolveHeaders({ 'X-T': `\${${name}}` }, [name], env({})), name, 'not set');
      expect(resolveHeaders({ 'X-T': `\${${name}}` }, [name], env({ [name]: 'own' }))).toEqual({ 'X-T': 'own' });
    }
  });

  it('W6: an empty variable counts as unset', () => {
    configurationError(() => resolveHeaders({ Authorization: `Bearer \${${VAR}}` }, [VAR], env({ [VAR]: '' })), VAR, 'not set');
  });

  it('W6: allowedEnvVars must be a list', () => {
    configurationError(() => resolveHeaders({ A: `\${${VAR}}` }, VAR as unknown as string[], env({ [VAR]: SECRET })), 'allowedEnvVars');
  });
});

describe('W6 resolveHeaders: malformed templates', () => {
  it.each([
    ['an unterminated placeholder', `${SECRET} \${${VAR}`],
    ['a lone ${', `${SECRET}\${`],
    ['an empty placeholder', `${SECRET}\${}`],
    ['a name starting with a digit', `${SECRET}\${1TOKEN}`],
    ['a name with a dash', `${SECRET}\${MY-TOKEN}`],
    ['spaces in the placeholder', `${SECRET}\${ ${VAR} }`],
    ['a nested placeholder', `${SECRET}\${\${${VAR}}}`],
  ])('W6: %s is an error naming the header', (_label, template) => {
    configurationError(() => resolveHeaders({ 'X-Template': template }, [VAR], env({ [VAR]: SECRET })), '"X-Template"');
  });
});

describe('W6 resolveHeaders: values that cannot be sent', () => {
  it.each([
    ['CR', '\r'],
    ['LF', '\n'],
    ['CRLF with an injected header', '\r\nX-Injected: 1'],
    ['NUL', '\0'],
    ['another control character', '\x01'],
    ['DEL', '\x7f'],
    ['a character outside Latin-1', '€'],
  ])('W6: %s in an expanded value is an error naming header and variable', (_label, bad) => {
    configurationError(() => resolveHeaders({ Authorization: `Bearer \${${VAR}}` }, [VAR], env({ [VAR]: `${SECRET}${bad}` })), '"Authorization"', VAR);
  });

  it.each([
    ['CR', '\r'],
    ['LF', '\n'],
    ['NUL', '\0'],
  ])('W6: %s in a literal template is an error naming the header', (_label, bad) => {
    configurationError(() => resolveHeaders({ 'X-Lit': `${SECRET}${bad}` }, [], env({})), '"X-Lit"');
  });

  it.each([
    ['CR', 'X-A\rB'],
    ['LF', 'X-A\nB'],
    ['NUL', 'X-A\0B'],
    ['a space', 'Bad Header'],
    ['a colon', 'X-A:B'],
    ['nothing', ''],
    ['non-ASCII', 'X-Grüße'],
    ['__proto__', '__proto__'],
  ])('W6: %s in a header name is an error', (_label, name) => {
    const error = configurationError(() => resolveHeaders(Object.fromEntries([[name, SECRET]]), [], env({})), 'header');
    expect(error.message).not.toMatch(/[\r\n\0]/);
  });

  it('W6: one header set twice under different cases is an error', () => {
    configurationError(() => resolveHeaders({ Authorization: SECRET, authorization: SECRET }, [], env({})), '"authorization"', 'twice');
  });
});

describe('W6 forbidden headers', () => {
  it.each([
    'host',
    'Host',
    'content-length',
    'Content-Length',
    'connection',
    'transfer-encoding',
    'Transfer-Encoding',
    'trailer',
    'upgrade',
    'keep-alive',
    'te',
    'TE',
    'expect',
    'proxy-authorization',
    'Proxy-Authorization',
    'proxy-connection',
    'Proxy-Anything',
    'sec-fetch-mode',
    'Sec-WebSocket-Key',
    'SEC-X',
  ])('W6: %s is forbidden, named, its value never shown', (name) => {
    configurationError(() => resolveHeaders({ [name]: `\${${VAR}}` }, [VAR], env({ [VAR]: SECRET })), JSON.stringify(name), 'forbidden');
    configurationError(() => resolveHeaders({ [name]: SECRET }, [], env({})), JSON.stringify(name), 'forbidden');
  });

  it.each(['Authorization', 'X-Proxy', 'X-Sec-Token', 'Content-Type', 'hosting', 'tea'])('W6: %s is allowed', (name) => {
    expect(resolveHeaders({ [name]: 'v' }, [], env({}))).toEqual({ [name]: 'v' });
  });
});

describe('W6 checkHeaderTemplates (config time)', () => {
  const WHERE = 'hooks[3] (audit)';

  function configError(work: () => unknown, ...names: string[]): HookConfigurationError {
    let caught: unknown;
    try {
      work();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HookConfigurationError);
    const error = caught as HookConfigurationError;
    for (const name of [WHERE, 'webhook.headers', ...names]) expect(error.message).toContain(name);
    expect(error.message).not.toContain(SECRET);
    return error;
  }

  it('W6: valid templates pass without any variable set', () => {
    expect(() => checkHeaderTemplates({ Authorization: 'Bearer ${W6_NEVER_SET_ANYWHERE}' }, ['W6_NEVER_SET_ANYWHERE'], WHERE)).not.toThrow();
    expect(() => checkHeaderTemplates(undefined, undefined, WHERE)).not.toThrow();
  });

  it('W6: a forbidden header is rejected', () => {
    configError(() => checkHeaderTemplates({ 'Transfer-Encoding': SECRET }, [], WHERE), '"Transfer-Encoding"', 'forbidden');
    configError(() => checkHeaderTemplates({ 'sec-ch-ua': SECRET }, [], WHERE), '"sec-ch-ua"');
  });

  it('W6: a variable not in allowedEnvVars is rejected', () => {
    configError(() => checkHeaderTemplates({ Authorization: `${SECRET}\${HOOK_TOKEN}` }, ['OTHER'], WHERE), 'HOOK_TOKEN', 'allowedEnvVars');
  });

  it('W6: malformed templates are rejected', () => {
    configError(() => checkHeaderTemplates({ Authorization: `${SECRET}\${HOOK_TOKEN` }, ['HOOK_TOKEN'], WHERE), '"Authorization"');
    configError(() => checkHeaderTemplates({ Authorization: `${SECRET}\${}` }, [], WHERE), '"Authorization"');
  });

  it('W6: CR/LF/NUL in a literal template or a name is rejected', () => {
    configError(() => checkHeaderTemplates({ 'X-A': `${SECRET}\r\nX-B: 1` }, [], WHERE), '"X-A"');
    configError(() => checkHeaderTemplates({ 'X-A\r\nX-B': SECRET }, [], WHERE), 'header');
  });
});

describe('W6 property', () => {
  const names = fc.oneof(
    fc.constantFrom('Authorization', 'X-Token', 'host', 'Sec-X', 'proxy-a', 'x-a', 'X-A', '__proto__'),
    fc.string({ maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 6 }),
  );
  const fragments = fc.oneof(
    fc.constantFrom('${', '}', '$', '${A}', '${B}', '${SECRET_VAR}', '${1X}', '\r', '\n', '\0', 'Bearer ', '€'),
    fc.string({ maxLength: 6 }),
    fc.string({ unit: 'binary', maxLength: 4 }),
  );
  const templates = fc.array(fragments, { maxLength: 6 }).map((parts) => parts.join(''));
  const envValues = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('', '${A}', 'x\r\ny', SECRET));

  it('W6: resolveHeaders never returns CR/LF/NUL and throws nothing but a configuration WebhookError without the secret', () => {
    fc.assert(
      fc.property(
        fc.dictionary(names, templates, { maxKeys: 4 }),
        fc.subarray(['A', 'B', 'SECRET_VAR', 'C']),
        fc.record({ A: envValues, B: envValues }, { requiredKeys: [] }),
        (headers, allowed, values) => {
          const environment: NodeJS.ProcessEnv = { ...values, SECRET_VAR: SECRET };
          let resolved: Record<string, string>;
          try {
            resolved = resolveHeaders(headers, allowed, environment);
          } catch (error) {
            expect(error).toBeInstanceOf(WebhookError);
            expect((error as WebhookError).code).toBe('configuration');
            expect((error as WebhookError).message).not.toContain(SECRET);
            return;
          }
          for (const [name, value] of Object.entries(resolved)) {
            expect(value).not.toMatch(/[\r\n\0]/);
            expect(name).not.toMatch(/[\r\n\0]/);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
