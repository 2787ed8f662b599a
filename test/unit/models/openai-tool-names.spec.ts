/**
 * Issue 4 item 5: our `identifier/apiName` tools as Chat Completions function names
 * (`^[a-zA-Z0-9_-]{1,64}$`), encoded reversibly and decoded back, for any pair.
 */
import fc from 'fast-check';
import { encodeToolName, isValidFunctionName, ToolNameTable } from '../../../src/runtime/models/openai-tool-names.js';

describe('function names for tools', () => {
  it('plain pairs become identifier__apiName and decode back without a table', () => {
    expect(encodeToolName({ identifier: 'clock', apiName: 'now' })).toBe('clock__now');
    expect(encodeToolName({ identifier: 'agents', apiName: 'call' })).toBe('agents__call');
    expect(encodeToolName({ identifier: 'my-kb', apiName: 'search_docs' })).toBe('my-kb__search_docs');
    expect(new ToolNameTable([]).decode('my-kb__search_docs')).toEqual({ identifier: 'my-kb', apiName: 'search_docs' });
    // An apiName may itself contain `__`: the split is at the first one.
    expect(new ToolNameTable([]).decode('fs__read__all')).toEqual({ identifier: 'fs', apiName: 'read__all' });
  });

  it('names that would not split back, or are not allowed, get a hashed name decoded through the table', () => {
    const odd = [
      { identifier: 'kb', apiName: 'docs.search' },
      { identifier: 'a__b', apiName: 'c' },
      { identifier: 'a_', apiName: '_b' },
      { identifier: 'x'.repeat(40), apiName: 'y'.repeat(40) },
      { identifier: 'ünï', apiName: 'cödé' },
    ];
    const table = new ToolNameTable(odd);
    const names = odd.map(encodeToolName);
    expect(new Set(names).size).toBe(odd.length);
    for (const [i, name] of names.entries()) {
      expect(isValidFunctionName(name)).toBe(true);
      expect(name).not.toContain('__');
      expect(table.decode(name)).toEqual(odd[i]);
    }
  });

  it('an unknown name without `__` decodes to an empty identifier (the runtime reports an unknown tool)', () => {
    expect(new ToolNameTable([]).decode('lookup')).toEqual({ identifier: '', apiName: 'lookup' });
  });

  it('property: every pair encodes to a valid, deterministic name that the table decodes back', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 80 }), fc.string({ minLength: 1, maxLength: 80 }), (identifier, apiName) => {
        const name = encodeToolName({ identifier, apiName });
        expect(isValidFunctionName(name)).toBe(true);
        expect(encodeToolName({ identifier, apiName })).toBe(name);
        expect(new ToolNameTable([{ identifier: 'other', apiName: 'tool' }, { identifier, apiName }]).decode(name)).toEqual({ identifier, apiName });
      }),
    );
  });
});
