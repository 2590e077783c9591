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
import { backupCommand } from './backup-command.js';
import { convertCommand } from './convert-command.js';
import { doctorCommand } from './doctor-command.js';
import { identityCommand } from './identity-command.js';
import { mcpCommand } from './mcp-command.js';
import { resetCommand } from './reset-command.js';
import { statusCommand } from './status-command.js';

type Action = (io: CliIo, args: readonly string[], flags: Record<string, unknown>) => Promise<number | void>;

interface CommandSpec {
  readonly usage: string;
  readonly describe: string;
  /** Flag, description, and for a boolean flag `false` (so `--force path` keeps `path` positional). */
  readonly options: readonly (readonly [flag: string, description: string, boolean?: false])[];
  readonly examples?: readonly string[];
  readonly action: Action;
}

const COMMON_OPTIONS = [['--config', 'Path of the config file (default ~/.config/agentbus/config.json, or AGENTBUS_CONFIG)']] as const;

/** Appended to every command's description: the exit codes scripts may rely on. */
const EXIT_TEXT = 'Exit codes: 0 done, 1 failed, 2 usage error, 3 refused (nothing changed).';

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  mcp: {
    usage: 'mcp',
    describe: `Run the MCP stdio server (what a harness spawns). stdout carries JSON-RPC only. ${EXIT_TEXT}`,
    options: COMMON_OPTIONS,
    examples: ['mcp', 'mcp --config ~/.config/agentbus/config.json'],
    action: (io, _args, flags) => mcpCommand(io, flags),
  },
  status: {
    usage: 'status',
    describe: `Show live sessions, channels, usage against the budget, the current notice, the embedding backlog, the config path, the data directory, the driver and lock protocol. Never creates the database. ${EXIT_TEXT}`,
    options: [...COMMON_OPTIONS, ['--json', 'Print one JSON object instead of text', false]],
    examples: ['status', 'status --json', 'status --config ./agentbus.json'],
    action: (io, _args, flags) => statusCommand(io, flags),
  },
  reset: {
    usage: 'reset',
    describe: `Wipe all bus data (channels, messages, memories, sessions) in one transaction, after warning about live sessions and asking for confirmation on a terminal. The file is kept; running agents recover by registering again. Without a terminal it refuses (exit 3) unless --yes is given. ${EXIT_TEXT}`,
    options: [...COMMON_OPTIONS, ['-y, --yes', 'Do not ask: wipe (for scripts)', false]],
    examples: ['reset', 'reset --yes'],
    action: (io, _args, flags) => resetCommand(io, flags),
  },
  identity: {
    usage: 'identity',
    describe: `Print the one-line registration prompt for this directory (for a SessionStart hook), from .local/agentbus.json. ${EXIT_TEXT}`,
    options: [],
    examples: ['identity'],
    action: async (io) => identityCommand(io),
  },
  doctor: {
    usage: 'doctor',
    describe: `Check the config, data directory permissions, the database's lock protocol and integrity, and stale locks left by dead processes; offers to clear only those (--fix clears without asking). Exits 1 when a problem remains. ${EXIT_TEXT}`,
    options: [
      ...COMMON_OPTIONS,
      ['--json', 'Print one JSON object {ok, checks: [{name, status, message}]} instead of text', false],
      ['--fix', 'Clear stale locks of dead processes without asking', false],
    ],
    examples: ['doctor', 'doctor --json', 'doctor --fix'],
    action: (io, _args, flags) => doctorCommand(io, flags),
  },
  backup: {
    usage: 'backup [path]',
    describe: `Write a consistent copy of the database with VACUUM INTO, safe while agents run, and check its integrity before it appears at the path. Default path: <data directory>/backups/agentbus-<time>.db. Refuses an existing file (exit 3) unless --force. Restore by stopping agentbus and copying the file over agentbus.db. ${EXIT_TEXT}`,
    options: [...COMMON_OPTIONS, ['-f, --force', 'Overwrite an existing file at the path', false]],
    examples: ['backup', 'backup ~/agentbus-before-upgrade.db', 'backup /tmp/bus.db --force'],
    action: (io, args, flags) => backupCommand(io, args, flags),
  },
  convert: {
    usage: 'convert',
    describe: `Convert the database to the other lock protocol: posix (native driver, node:sqlite) or portable (wasm driver). Refuses (exit 3) while any process has the database open; stop every agentbus process first. Checkpoints the WAL, rewrites the header with the target driver and verifies the file with it. ${EXIT_TEXT}`,
    options: [...COMMON_OPTIONS, ['--to', 'The target lock protocol: portable or posix']],
    examples: ['convert --to portable', 'convert --to posix'],
    action: (io, _args, flags) => convertCommand(io, flags),
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
    for (const [flag, description, boolean] of spec.options) prog.option(flag, description, boolean);
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
    stdinIsTty: process.stdin.isTTY === true,
  };
  const code = await main(process.argv.slice(2), io);
  process.exitCode = code;
}
