import { ArgumentValidator } from '../../../src/runtime/tools/argument-validator.js';

describe('tools: ArgumentValidator', () => {
  it('understands 2020-12 schemas (as MCP servers announce them)', () => {
    const validator = new ArgumentValidator();
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    };
    expect(validator.check(schema, { pair: ['a', 1] })).toEqual({ valid: true });
    const bad = validator.check(schema, { pair: ['a', 'b'] });
    expect(bad.valid).toBe(false);
    expect(bad.summary).toBe('/pair/1 must be number');
  });

  it("a server schema ajv cannot compile is left to the server: everything passes", () => {
    const validator = new ArgumentValidator();
    expect(validator.check({ type: 'object', properties: { a: { type: 'nonsense' } } }, { a: 1 })).toEqual({ valid: true });
  });

  it('compileStrict refuses unknown keywords; check then uses that compiled schema', () => {
    const validator = new ArgumentValidator();
    expect(() => validator.compileStrict({ type: 'object', requird: ['a'] })).toThrow(/requird/);
    const schema = { type: 'object', required: ['a'] };
    validator.compileStrict(schema);
    expect(validator.check(schema, {})).toEqual({ valid: false, summary: "(root) must have required property 'a'" });
  });

  it('reports at most five errors', () => {
    const validator = new ArgumentValidator();
    const properties = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((k) => [k, { type: 'string' }]));
    const check = validator.check({ type: 'object', properties }, { a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1 });
    expect(check.summary!.split('; ')).toHaveLength(6);
    expect(check.summary).toMatch(/and 2 more$/);
  });
});
