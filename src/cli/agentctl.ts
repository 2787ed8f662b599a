#!/usr/bin/env node
/**
 * agentctl: the command line of nest-agent-hooks (DESIGN §9). Exit codes: 0 ok, 1 failure, 2 bad usage or
 * config. Commands that boot Nest import it on use: validate, generate and purge never need it.
 */
import 'reflect-metadata';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { AgentsConfigError, formatIssue } from '../config/config-error.js';
import { configFileToLoad } from '../config/config-file-rule.js';
import { isUsageOrConfigError, parseAgeOption, parseMode, parsePort, parsePositiveInteger, UsageError } from './cli-options.js';
import { generateCommand } from './generate-command.js';
import { checkConfig, checkQueueSettings } from './preflight.js';
import { validateCommand } from './validate-command.js';

const DEFAULT_DATABASE = 'sqlite:./data/agent-hooks.sqlite';
const DEFAULT_REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_HELP = 'sqlite:./data/agent-hooks.sqlite or postgres://…';
/** The rule of `AgentHooksModule.forRoot` too (config-file-rule.ts). */
const CONFIG_HELP = 'agents config file (default: config/agents.yaml when it exists, else none: no agents)';
/** Where the plugins manifest is looked for without --plugins (DESIGN §8), as the loader does. */
const PLUGINS_HELP = 'plugins manifest (default: plugins/plugins.toml in the folder of the config file, else in its parent folder: for config/agents.yaml, config/plugins/plugins.toml, else ./plugins/plugins.toml)';

/** The package's version: package.json sits two folders up from both src/cli and dist/cli. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
}

interface ServeFlags {
  config?: string;
  plugins?: string;
  port: number;
  host: string;
  database: string;
  mode: 'local' | 'queue';
  redis: string;
  queuePrefix?: string;
  purgeOlderThan?: number;
  purgeEvery?: number;
}

interface WorkerFlags {
  config?: string;
  plugins?: string;
  database: string;
  redis: string;
  queuePrefix?: string;
  concurrency?: number;
}

export function buildProgram(): Command {
  const program = new Command('agentctl')
    .description('Run and operate nest-agent-hooks agents')
    .version(packageVersion(), '-V, --version', 'print the version of nest-agent-hooks')
    .exitOverride()
    .showHelpAfterError();

  program
    .command('serve')
    .description('start the standalone HTTP server (JSON logs on stdout; SIGTERM shuts down gracefully)')
    .option('--config <file>', CONFIG_HELP)
    .option('--plugins <file>', PLUGINS_HELP)
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, Number(process.env.PORT ?? 3000))
    .option('--host <host>', 'address to bind', process.env.HOST ?? '127.0.0.1')
    .option('--database <url>', DATABASE_HELP, DEFAULT_DATABASE)
    .option('--mode <mode>', 'local (steps run here) or queue (steps are BullMQ jobs; needs PostgreSQL and Redis)', parseMode, 'local')
    .option('--redis <url>', 'Redis for --mode queue', DEFAULT_REDIS)
    .option('--queue-prefix <name>', 'BullMQ key prefix for --mode queue, one per deployment sharing a Redis (default agent-hooks)')
    .option('--purge-older-than <age>', 'also purge completed operations older than this, at start and periodically (e.g. 30d, 12h, 90m); off by default', parseAgeOption)
    .option('--purge-every <age>', 'how often the periodic purge runs (default 1h; needs --purge-older-than)', parseAgeOption)
    .action(async (opts: ServeFlags) => {
      if (opts.purgeEvery !== undefined && opts.purgeOlderThan === undefined) throw new UsageError('--purge-every needs --purge-older-than');
      const configFile = await configToLoad(opts.config);
      if (opts.mode === 'queue') checkQueueSettings(opts.database, opts.redis);
      // Imported on use: Nest and the database drivers take a second to load.
      const { bootstrapServer, closeOnSignals } = await import('../server/bootstrap-server.js');
      const app = await bootstrapServer({
        host: opts.host,
        port: opts.port,
        configFile,
        ...(opts.plugins ? { pluginsFile: opts.plugins } : {}),
        database: opts.database,
        mode: opts.mode,
        ...(opts.mode === 'queue' ? { redis: opts.redis, ...(opts.queuePrefix ? { queue: { prefix: opts.queuePrefix } } : {}) } : {}),
        ...(opts.purgeOlderThan !== undefined ? { purge: { olderThanMs: opts.purgeOlderThan, everyMs: opts.purgeEvery ?? 3_600_000 } } : {}),
      });
      closeOnSignals(app);
    });

  program
    .command('worker')
    .description('run queue-mode step jobs (no HTTP): needs the shared PostgreSQL database and the Redis of the servers')
    .option('--config <file>', `${CONFIG_HELP}; the same as the servers`)
    .option('--plugins <file>', PLUGINS_HELP)
    .option('--database <url>', 'the shared database, postgres://…', process.env.DATABASE_URL)
    .option('--redis <url>', 'the queue', DEFAULT_REDIS)
    .option('--queue-prefix <name>', 'BullMQ key prefix, the same as the servers (default agent-hooks)')
    .option('--concurrency <n>', 'step jobs run at once in this process (default 4)', parsePositiveInteger)
    .action(async (opts: WorkerFlags) => {
      if (opts.database === undefined) throw new UsageError('agentctl worker needs --database postgres://… (or DATABASE_URL): queue mode shares one PostgreSQL database');
      const configFile = await configToLoad(opts.config);
      checkQueueSettings(opts.database, opts.redis);
      const { bootstrapWorker, closeWorkerOnSignals } = await import('../server/bootstrap-worker.js');
      const app = await bootstrapWorker({
        configFile,
        ...(opts.plugins ? { pluginsFile: opts.plugins } : {}),
        database: opts.database,
        redis: opts.redis,
        queue: {
          ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
          ...(opts.queuePrefix ? { prefix: opts.queuePrefix } : {}),
        },
      });
      closeWorkerOnSignals(app);
    });

  program
    .command('run')
    .description('run one operation in this process and print the answer and the hook timeline')
    .argument('<agentId>', 'an agent of the config')
    .argument('<prompt>', 'what to ask')
    .option('--config <file>', CONFIG_HELP)
    .option('--plugins <file>', PLUGINS_HELP)
    .option('--database <url>', DATABASE_HELP, DEFAULT_DATABASE)
    .action(async (agentId: string, prompt: string, opts: { config?: string; plugins?: string; database: string }) => {
      const config = await configToLoad(opts.config);
      const { runCommand } = await import('./run-command.js');
      const code = await runCommand(agentId, prompt, { ...opts, config }, process.stdout);
      if (code !== 0) process.exitCode = code;
    });

  program
    .command('validate')
    .description('load the config and instantiate every hook plugin without calling any hook; prints ok or every problem')
    .option('--config <file>', 'agents config file', 'config/agents.yaml')
    .option('--plugins <file>', PLUGINS_HELP)
    .action(async (opts: { config: string; plugins?: string }) => {
      const code = await validateCommand(opts, process.stdout, process.stderr);
      if (code !== 0) process.exitCode = code;
    });

  program
    .command('generate')
    .description('create plugins/plugins.toml, or add an entry for every plugin id the config uses (hand edits are kept)')
    .option('--config <file>', 'agents config file', 'config/agents.yaml')
    .option('--plugins <file>', 'plugins manifest (default: the existing one beside the config or in its parent folder, else plugins/plugins.toml)')
    .option('--force', 'also rewrite the entries of plugin ids that are already declared, to the default module path')
    .action(async (opts: { config: string; plugins?: string; force?: boolean }) => {
      const code = await generateCommand(opts, process.stdout, process.stderr);
      if (code !== 0) process.exitCode = code;
    });

  program
    .command('purge')
    .description('delete completed operations older than an age, with their messages, interventions, placeholders, caller hooks and timeline; running and waiting ones stay')
    .requiredOption('--older-than <age>', 'a whole number and a unit s, m, h, d or w (e.g. 30d, 12h, 90m)', parseAgeOption)
    .option('--database <url>', DATABASE_HELP, DEFAULT_DATABASE)
    .action(async (opts: { olderThan: number; database: string }) => {
      const { purgeCommand } = await import('./purge-command.js');
      const code = await purgeCommand({ olderThanMs: opts.olderThan, database: opts.database }, process.stdout);
      if (code !== 0) process.exitCode = code;
    });

  return program;
}

/** The config file the module's rule picks (false: none), checked before Nest boots. */
async function configToLoad(given: string | undefined): Promise<string | false> {
  const file = configFileToLoad(given);
  if (file === undefined) return false;
  await checkConfig(file);
  return file;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    // Commander already printed the problem and the help.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const message = error instanceof AgentsConfigError ? error.issues.map(formatIssue).join('\n') : error instanceof Error ? error.message : String(error);
    process.stderr.write(`agentctl: ${message}\n`);
    return isUsageOrConfigError(error) ? 2 : 1;
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  // main() catches every failure itself (printed, turned into the exit code): its promise never rejects.
  void main(process.argv).then((code) => {
    if (code !== 0) process.exitCode = code;
  });
}
