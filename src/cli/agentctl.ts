#!/usr/bin/env node
/**
 * agentctl: the command line of nest-agent-hooks (DESIGN §9). Exit codes: 0 ok, 1 failure, 2 bad usage.
 */
import 'reflect-metadata';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { generateCommand } from './generate-command.js';
import { validateCommand } from './validate-command.js';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return port;
}

function parseMode(value: string): 'local' | 'queue' {
  if (value !== 'local' && value !== 'queue') throw new InvalidArgumentError("must be 'local' or 'queue'");
  // Queue mode (BullMQ workers) is not part of this build yet; say so instead of pretending.
  if (value === 'queue') throw new InvalidArgumentError('queue mode is not available in this build yet');
  return value;
}

export function buildProgram(): Command {
  const program = new Command('agentctl')
    .description('Run and operate nest-agent-hooks agents')
    .exitOverride()
    .showHelpAfterError();

  program
    .command('serve')
    .description('start the standalone HTTP server')
    .option('--config <file>', 'agents config file', 'config/agents.yaml')
    .option('--plugins <file>', 'plugins manifest (default: plugins/plugins.toml beside the config)')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, Number(process.env.PORT ?? 3000))
    .option('--host <host>', 'address to bind', process.env.HOST ?? '127.0.0.1')
    .option('--database <url>', 'sqlite:./data/agent-hooks.sqlite or postgres://…', 'sqlite:./data/agent-hooks.sqlite')
    .option('--mode <mode>', 'local or queue', parseMode, 'local')
    .action(async (opts: { config: string; plugins?: string; port: number; host: string; database: string; mode: 'local' | 'queue' }) => {
      // Imported on use: Nest and the database drivers take a second to load, which validate/generate never need.
      const { bootstrapServer, closeOnSignals } = await import('../server/bootstrap-server.js');
      const app = await bootstrapServer({
        host: opts.host,
        port: opts.port,
        configFile: opts.config,
        ...(opts.plugins ? { pluginsFile: opts.plugins } : {}),
        database: opts.database,
        mode: opts.mode,
      });
      closeOnSignals(app);
    });

  program
    .command('run')
    .description('run one operation and print the answer and the hook timeline')
    .argument('<agentId>', 'an agent of the config')
    .argument('<prompt>', 'what to ask')
    .option('--config <file>', 'agents config file', 'config/agents.yaml')
    .option('--database <url>', 'sqlite:./data/agent-hooks.sqlite or postgres://…', 'sqlite:./data/agent-hooks.sqlite')
    .action(async (agentId: string, prompt: string, opts: { config: string; database: string }) => {
      const { runCommand } = await import('./run-command.js');
      const code = await runCommand(agentId, prompt, opts, process.stdout);
      if (code !== 0) process.exitCode = code;
    });

  program
    .command('validate')
    .description('load the config and instantiate every hook plugin without calling any hook; prints ok or every problem')
    .option('--config <file>', 'agents config file', 'config/agents.yaml')
    .option('--plugins <file>', 'plugins manifest (default: plugins/plugins.toml beside the config, else in its parent folder)')
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

  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    process.stderr.write(`agentctl: ${error instanceof Error ? error.message : String(error)}\n`);
    // Bad usage or config (an unknown agent, an invalid config file) is 2; anything else failed (1).
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'unknown_agent' || code === 'configuration' ? 2 : 1;
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
  main(process.argv).then((code) => {
    if (code !== 0) process.exitCode = code;
  });
}
