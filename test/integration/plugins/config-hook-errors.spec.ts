/**
 * Issue 6 item 3 (DESIGN §8): what goes wrong between agents.yaml, plugins.toml and the plugin modules is
 * reported naming file, line and key — through the module's bootstrap and through `loadConfigHooks` — and
 * the module path rules: extension order, CommonJS `.js`, refs to functions, classes, statics and objects,
 * an explicit plugins file. Never a value from the files, never an error message from plugin code.
 */
import { Test } from '@nestjs/testing';
import { AgentsConfigError } from '../../../src/config/config-error.js';
import { loadAgentsConfig } from '../../../src/config/agents-config.loader.js';
import { loadConfigHooks } from '../../../src/config/config-hooks.loader.js';
import { AgentHooksModule, HookDispatcher, HookInvocation, RunEndContext, ToolResultContext } from '../../../src/index.js';
import { pluginProject, type PluginProject } from './plugin-project.js';

const projects: PluginProject[] = [];
afterAll(() => projects.forEach((project) => project.remove()));

function project(files: Record<string, string>): PluginProject {
  const created = pluginProject(files);
  projects.push(created);
  return created;
}

async function bootError(configFile: string, pluginsFile?: string): Promise<AgentsConfigError> {
  const error = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ configFile, database: 'sqlite::memory:', ...(pluginsFile ? { pluginsFile } : {}) })],
  })
    .compile()
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(error).toBeInstanceOf(AgentsConfigError);
  expect((error as Error).message).not.toContain('DISTINCTIVE');
  return error as AgentsConfigError;
}

async function loadError(p: PluginProject, pluginsFile?: string): Promise<AgentsConfigError> {
  const config = await loadAgentsConfig(p.configFile);
  const error = await loadConfigHooks(config, pluginsFile ? { pluginsFile } : {}).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AgentsConfigError);
  expect((error as Error).message).not.toContain('DISTINCTIVE');
  return error as AgentsConfigError;
}

const AUDIT_MJS = 'export class Audit {\n  record() {}\n  other() {}\n}\nexport const helper = 1;\n';
const TOML = '[hooks.plugins]\naudit = "plugins/hooks/audit:Audit"\n';

describe('loader errors through the module bootstrap, naming file, line and key', () => {
  it('a missing plugin id: the agents.yaml line of `plugin`, with the ids plugins.toml defines', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: record }\n    - plugin: audlt\n      method: record\n',
      'plugins/plugins.toml': TOML,
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const error = await bootError(p.configFile);
    expect(error.message).toBe(`${p.configFile}:5 hooks.on_run_end[1].plugin: unknown plugin id "audlt" (${p.pluginsFile} defines: audit)`);
  });

  it('a missing method: the agents.yaml line of `method`, with the methods the plugin has', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  after_tool_call:\n    - plugin: audit\n      method: recrod\n',
      'plugins/plugins.toml': TOML,
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const error = await bootError(p.configFile);
    expect(error.message).toBe(`${p.configFile}:5 hooks.after_tool_call[0].method: not a method of the plugin (its methods: record, other)`);
  });

  it('a missing plugins.toml when a plugin entry needs it: the agents.yaml line, and where it looked', async () => {
    const p = project({ 'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { ref: "plugins/hooks/x:f" }\n    - { plugin: audit, method: record }\n' });
    const error = await bootError(p.configFile);
    expect(error.issues).toEqual([
      {
        file: p.configFile,
        line: 5,
        path: 'hooks.on_run_end[1].plugin',
        message: `a plugin entry needs plugins.toml, and none was found (looked for ${p.path('config/plugins/plugins.toml')} and ${p.path('plugins/plugins.toml')})`,
      },
    ]);
  });

  it('a missing export: the plugins.toml line of the plugin id, with the exports the module has', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: record }\n',
      'plugins/plugins.toml': '# plugins\n[hooks.plugins]\naudit = "plugins/hooks/audit:Audti"\n',
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const error = await bootError(p.configFile);
    expect(error.message).toBe(`${p.pluginsFile}:3 hooks.plugins.audit: the module has no export of this name (its exports: Audit, helper)`);
  });

  it('a missing plugins file given explicitly, and an explicit file that is used (module paths from its parent folder)', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: record }\n',
      'etc/hooks.toml': TOML,
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const missing = await bootError(p.configFile, p.path('etc/nope.toml'));
    expect(missing.message).toBe(`${p.path('etc/nope.toml')}: cannot read the plugins file (ENOENT)`);
    const moduleRef = await Test.createTestingModule({
      imports: [AgentHooksModule.forRoot({ configFile: p.configFile, pluginsFile: p.path('etc/hooks.toml'), database: 'sqlite::memory:' })],
    }).compile();
    expect(moduleRef.get(HookDispatcher).hasHooks('on_run_end')).toBe(true);
    await moduleRef.close();
  });

  it('a literal secret in plugins.toml fails the bootstrap naming its line', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: record }\n',
      'plugins/plugins.toml': `${TOML}\n[hooks.plugins.settings]\npassword = "DISTINCTIVE-hunter2"\n`,
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const error = await bootError(p.configFile);
    expect(error.issues.map(({ file, line, path }) => `${file}:${line} ${path}`)).toEqual([`${p.pluginsFile}:5 hooks.plugins.settings.password`]);
  });

  it('a config with only ref: entries needs no plugins.toml, and its hook runs', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { ref: "plugins/hooks/end:onEnd" }\n',
      'plugins/hooks/end.mjs': 'export function onEnd(invocation) { invocation.metadata.log.push(invocation.ref); }\n',
    });
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: p.configFile, database: 'sqlite::memory:' })] }).compile();
    await moduleRef.init();
    const log: string[] = [];
    await moduleRef.get(HookDispatcher).dispatch('on_run_end', new RunEndContext({ runId: 'r', status: 'ok', durationMs: 1, steps: 1, toolCalls: 0 }), { metadata: { log } });
    expect(log).toEqual(['plugins/hooks/end:onEnd']);
    await moduleRef.close();
  });
});

describe('module and export problems, through loadConfigHooks', () => {
  it('module not found (plugin: at its plugins.toml line; ref: at its agents.yaml line)', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: record }\n    - { ref: "plugins/hooks/none:f" }\n',
      'plugins/plugins.toml': '[hooks.plugins]\naudit = "plugins/hooks/missing:Audit"\n',
    });
    const error = await loadError(p);
    expect(error.issues.map(({ file, line, path, message }) => ({ file, line, path, message }))).toEqual([
      { file: p.pluginsFile, line: 2, path: 'hooks.plugins.audit', message: `module not found (a path relative to ${p.dir}; without an extension .ts, .js, .mjs are tried)` },
      { file: p.configFile, line: 5, path: 'hooks.on_run_end[1].ref', message: `module not found (a path relative to ${p.dir}; without an extension .ts, .js, .mjs are tried)` },
    ]);
  });

  it('a plugin used at several points is reported once; its entries are not reported again', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: record }\n  on_run_error:\n    - { plugin: audit, method: other }\n',
      'plugins/plugins.toml': '[hooks.plugins]\naudit = "plugins/hooks/missing:Audit"\n',
    });
    expect((await loadError(p)).issues).toHaveLength(1);
  });

  it('an import that throws (its type and first line only), a non-class export, a constructor that throws (its type only)', async () => {
    const p = project({
      'config/agents.yaml':
        'system: s\nhooks:\n  on_run_end:\n    - { plugin: broken, method: m }\n    - { plugin: notclass, method: m }\n    - { plugin: arrow, method: m }\n    - { plugin: throws, method: m }\n',
      'plugins/plugins.toml':
        '[hooks.plugins]\nbroken = "plugins/hooks/broken:B"\nnotclass = "plugins/hooks/things:value"\narrow = "plugins/hooks/things:arrow"\nthrows = "plugins/hooks/things:Throws"\n',
      'plugins/hooks/broken.mjs': 'throw new SyntaxError("Unexpected token at import\\nDISTINCTIVE on a later line");\n',
      'plugins/hooks/things.mjs':
        'export const value = { m() {} };\nexport const arrow = () => ({ m() {} });\nexport class Throws {\n  constructor() { throw new RangeError("DISTINCTIVE in constructor"); }\n  m() {}\n}\n',
    });
    const error = await loadError(p);
    expect(error.issues.map(({ line, path, message }) => `${line} ${path}: ${message}`)).toEqual([
      '2 hooks.plugins.broken: importing the module failed (SyntaxError: Unexpected token at import)',
      '3 hooks.plugins.notclass: the export is not a class (a plugin is a class constructed with no arguments)',
      '4 hooks.plugins.arrow: the export is not a class (a plugin is a class constructed with no arguments)',
      '5 hooks.plugins.throws: constructing the plugin with no arguments failed (RangeError)',
    ]);
  });

  it('a plugin whose dependency is not installed names the missing module (native .mjs and jiti .ts)', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: native, method: m }\n    - { plugin: typed, method: m }\n',
      'plugins/plugins.toml': '[hooks.plugins]\nnative = "plugins/hooks/native:N"\ntyped = "plugins/hooks/typed:T"\n',
      'plugins/hooks/native.mjs': 'import "@nest-agent-hooks-test/not-installed";\nexport class N { m() {} }\n',
      'plugins/hooks/typed.ts': 'import { x } from "@nest-agent-hooks-test/also-missing";\nexport class T { m(): unknown { return x; } }\n',
    });
    const error = await loadError(p);
    expect(error.issues.map(({ line, path, message }) => `${line} ${path}: ${message}`)).toEqual([
      "2 hooks.plugins.native: importing the module failed (cannot find module '@nest-agent-hooks-test/not-installed')",
      "3 hooks.plugins.typed: importing the module failed (cannot find module '@nest-agent-hooks-test/also-missing')",
    ]);
  });

  it('ref problems: a missing export, a non-function, a class without a method, a missing Class.method', async () => {
    const p = project({
      'config/agents.yaml': [
        'system: s',
        'hooks:',
        '  on_run_end:',
        '    - { ref: "plugins/hooks/refs:nope" }',
        '    - { ref: "plugins/hooks/refs:answer" }',
        '    - { ref: "plugins/hooks/refs:Policy" }',
        '    - { ref: "plugins/hooks/refs:Policy.nope" }',
        '    - { ref: "plugins/hooks/refs:Policy.toString" }',
        '',
      ].join('\n'),
      'plugins/hooks/refs.mjs': 'export const answer = 42;\nexport class Policy {\n  check() {}\n}\n',
    });
    const error = await loadError(p);
    expect(error.issues.map(({ line, path, message }) => `${line} ${path}: ${message}`)).toEqual([
      '4 hooks.on_run_end[0].ref: the module has no export of this name (its exports: Policy, answer)',
      '5 hooks.on_run_end[1].ref: the export is not a function',
      '6 hooks.on_run_end[2].ref: the export is a class: name one of its methods, "module/path:Class.method"',
      '7 hooks.on_run_end[3].ref: the export has no method of this name',
      '8 hooks.on_run_end[4].ref: the export has no method of this name',
    ]);
  });

  it('an inherited Object member or constructor is not a plugin method', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  on_run_end:\n    - { plugin: audit, method: toString }\n    - { plugin: audit, method: constructor }\n',
      'plugins/plugins.toml': TOML,
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const error = await loadError(p);
    expect(error.issues.map(({ line, path }) => `${line} ${path}`)).toEqual(['4 hooks.on_run_end[0].method', '5 hooks.on_run_end[1].method']);
  });
});

describe('module paths and the forms a ref can take', () => {
  it('without an extension .ts wins over .js and .mjs; .js is CommonJS here and loads natively; explicit extensions are kept', async () => {
    const p = project({
      'config/agents.yaml': [
        'system: s',
        'hooks:',
        '  transform_tool_result:',
        '    - { ref: "plugins/hooks/pick:tag" }',
        '    - { ref: "plugins/hooks/pick.mjs:tag" }',
        '    - { ref: "plugins/hooks/cjs:tag" }',
        '    - { ref: "plugins/hooks/static:Statics.tag" }',
        '    - { ref: "plugins/hooks/static:helpers.tag" }',
        '    - { ref: "plugins/hooks/static:Counter.tag" }',
        '    - { ref: "plugins/hooks/static:Counter.tag" }',
        '',
      ].join('\n'),
      'plugins/hooks/pick.ts': 'export function tag(invocation: { payload: { withResult(text: string): unknown; result: string } }): unknown {\n  return invocation.payload.withResult(invocation.payload.result + "[ts]");\n}\n',
      'plugins/hooks/pick.js': 'exports.tag = (invocation) => invocation.payload.withResult(invocation.payload.result + "[js]");\n',
      'plugins/hooks/pick.mjs': 'export const tag = (invocation) => invocation.payload.withResult(invocation.payload.result + "[mjs]");\n',
      'plugins/hooks/cjs.js': 'module.exports = { tag(invocation) { return invocation.payload.withResult(invocation.payload.result + "[cjs]"); } };\n',
      'plugins/hooks/static.mjs': [
        'export class Statics { static tag(invocation) { return invocation.payload.withResult(invocation.payload.result + "[static]"); } }',
        'export const helpers = { suffix: "[object]", tag(invocation) { return invocation.payload.withResult(invocation.payload.result + this.suffix); } };',
        'export class Counter { constructor() { this.n = 0; } tag(invocation) { this.n += 1; return invocation.payload.withResult(invocation.payload.result + `[instance #${this.n}]`); } }',
        '',
      ].join('\n'),
    });
    const config = await loadAgentsConfig(p.configFile);
    const hooks = await loadConfigHooks(config);
    let context = new ToolResultContext({ runId: 'r', toolCallId: 'c', identifier: 'fs', apiName: 'read', provider: 'local', result: '' });
    for (const hook of hooks) {
      const invocation = new HookInvocation({ point: hook.point, payload: context, ...(hook.ref ? { ref: hook.ref } : {}) });
      context = (hook.handler as (arg: unknown) => ToolResultContext)(invocation);
    }
    expect(context.result).toBe('[ts][mjs][cjs][static][object][instance #1][instance #2]');
    expect(hooks.map(({ id, source, order, failurePolicy, ref, plugin }) => ({ id, source, order, failurePolicy, ref, plugin }))).toContainEqual({
      id: 'plugins/hooks/static:Counter.tag',
      source: 'config',
      order: 0,
      failurePolicy: 'fail',
      ref: 'plugins/hooks/static:Counter.tag',
      plugin: undefined,
    });
  });

  it('plugin entries carry plugin and method, onError and control on agent controls, and a matcher', async () => {
    const p = project({
      'config/agents.yaml': 'system: s\nhooks:\n  afterToolCall:\n    - { plugin: audit, method: record, onError: block, matcher: "^fs/" }\n  on_run_end:\n    - { plugin: audit, method: other, failure_policy: warn }\n',
      'plugins/plugins.toml': TOML,
      'plugins/hooks/audit.mjs': AUDIT_MJS,
    });
    const hooks = await loadConfigHooks(await loadAgentsConfig(p.configFile));
    expect(hooks.map(({ id, point, plugin, method, onError, control, failurePolicy, matcher }) => ({ id, point, plugin, method, onError, control, failurePolicy, matcher: matcher?.source }))).toEqual([
      { id: 'audit.record', point: 'afterToolCall', plugin: 'audit', method: 'record', onError: 'block', control: true, failurePolicy: 'fail', matcher: '^fs/' },
      { id: 'audit.other', point: 'on_run_end', plugin: 'audit', method: 'other', onError: 'continue', control: false, failurePolicy: 'warn', matcher: undefined },
    ]);
    expect(Object.isFrozen(hooks[0])).toBe(true);
  });
});
