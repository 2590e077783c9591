/**
 * The `agentbus` command line: sade commands, each in its own module. Errors
 * become one line on stderr and an exit code scripts can rely on.
 */
import { homedir } from 'node:os';
import sade from 'sade';
import { ConfigError } from '../config.js';
import { DbError } from '../db/db-error.js';
import { systemClock } from '../clock.js';
import { packageVersion } from '../package-version.js';
import { CliError, EXIT_CODES } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { identityCommand } from './identity-command.js';
import { mcpCommand } from './mcp-command.js';

type Action = (io: CliIo, args: readonly string[], flags: Record<string, unknown>) => Promise<number | void>;

interface CommandSpec {
  readonly usage: string;
  readonly describe: string;
  readonly options: readonly (readonly [flag: string, description: string])[];
  readonly examples?: readonly string[];
  readonly action: Action;
}

const COMMON_OPTIONS = [['--config', 'Path of the config file (default ~/.config/agentbus/config.json, or AGENTBUS_CONFIG)']] as const;

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  mcp: {
    usage: 'mcp',
    describe: 'Run the MCP stdio server (what a harness spawns). stdout carries JSON-RPC only.',
    options: COMMON_OPTIONS,
    examples: ['mcp', 'mcp --config ~/.config/agentbus/config.json'],
    action: (io, _args, flags) => mcpCommand(io, flags),
  },
  identity: {
    usage: 'identity',
    describe: 'Print the one-line registration prompt for this directory (for a SessionStart hook), from .local/agentbus.json.',
    options: [],
    examples: ['identity'],
    action: async (io) => identityCommand(io),
  },
};

function writeError(io: CliIo, message: string): void {
  io.stderr.write(`agentbus: ${message}\n`);
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const prog = sade('agentbus').version(packageVersion());
  const known = new Set<string>();
  let chosen: { action: Action; args: unknown[] } | undefined;
  for (const [name, spec] of Object.entries(COMMANDS)) {
    known.add(name);
    prog.command(spec.usage, spec.describe);
    for (const [flag, description] of spec.options) prog.option(flag, description);
    for (const example of spec.examples ?? []) prog.example(example);
    prog.action((...args: unknown[]) => {
      chosen = { action: spec.action, args };
    });
  }
  const first = argv[0];
  if (first !== undefined && !first.startsWith('-') && !known.has(first)) {
    writeError(io, `unknown command "${first}"; run \`agentbus --help\` for the commands`);
    return EXIT_CODES.usage;
  }
  // sade exits the process itself on an unknown flag; throwing from mri's hook keeps control here.
  const unknownFlag = new Error('unknown flag');
  let badFlag = '';
  try {
    prog.parse(['node', 'agentbus', ...argv], {
      unknown: (flag: string) => {
        badFlag = flag;
        throw unknownFlag;
      },
    } as never);
  } catch (error) {
    if (error !== unknownFlag) throw error;
    const help = first === undefined || first.startsWith('-') ? 'agentbus --help' : `agentbus ${first} --help`;
    writeError(io, `unknown option ${badFlag}; run \`${help}\` for the options`);
    return EXIT_CODES.usage;
  }
  if (chosen === undefined) return 0; // --help or --version was printed
  const { action, args } = chosen;
  const flags = (args.at(-1) ?? {}) as Record<string, unknown>;
  const positional = args.slice(0, -1).filter((a): a is string => typeof a === 'string');
  try {
    return (await action(io, positional, flags)) ?? 0;
  } catch (error) {
    if (error instanceof CliError) {
      writeError(io, error.message);
      return EXIT_CODES[error.code];
    }
    if (error instanceof ConfigError || error instanceof DbError) {
      writeError(io, error.message);
      return EXIT_CODES.failed;
    }
    throw error;
  }
}

/** The process entry: real streams, environment and clock. */
export async function runFromProcess(): Promise<void> {
  const io: CliIo = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    homeDir: homedir(),
    clock: systemClock,
    isTty: process.stdout.isTTY === true,
  };
  const code = await main(process.argv.slice(2), io);
  process.exitCode = code;
}
