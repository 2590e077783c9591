/**
 * The `agentbus` command line: the registry of commands, each in its folder
 * src/cli/commands/<name>/. Only the specs (usage, help, options) load on every
 * start; a command's entry loads only when that command runs (a hook command
 * such as `identity` must start about as fast as a bare node). Errors become
 * one line on stderr and an exit code scripts can rely on.
 */
import { homedir } from 'node:os';
import sade from 'sade';
import { systemClock } from '../clock.js';
import { closestName } from '../did-you-mean.js';
import { CliError, EXIT_CODES } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import type { CommandRun } from './command-run.js';
import { longName, type CommandSpec, type OptionSpec, type OptionsOf } from './command-spec.js';
import { spec as backup } from './commands/backup/spec.js';
import { spec as convert } from './commands/convert/spec.js';
import { spec as doctor } from './commands/doctor/spec.js';
import { spec as guard } from './commands/guard/spec.js';
import { spec as identity } from './commands/identity/spec.js';
import { spec as inbox } from './commands/inbox/spec.js';
import { spec as mcp } from './commands/mcp/spec.js';
import { spec as memory } from './commands/memory/spec.js';
import { spec as post } from './commands/post/spec.js';
import { spec as reset } from './commands/reset/spec.js';
import { spec as restore } from './commands/restore/spec.js';
import { spec as search } from './commands/search/spec.js';
import { spec as status } from './commands/status/spec.js';
import { spec as tail } from './commands/tail/spec.js';
import { spec as web } from './commands/web/spec.js';
import { typedOptions } from './typed-options.js';

/** A command of the registry: its spec, and its run, imported only when it runs. */
interface Registered {
  /** Usage, help text and options (commands/<name>/spec.ts). */
  readonly spec: CommandSpec;
  /** Types sade's flags (a usage error for a bad one) and returns the start of the command: import its entry, run it. */
  readonly parse: (name: string, flags: Record<string, unknown>) => (io: CliIo, args: readonly string[]) => Promise<number>;
}

/** Ties a spec to its entry (commands/<name>/index.ts): the entry's run takes exactly the options the spec declares. */
function command<const O extends readonly OptionSpec[]>(spec: CommandSpec<O>, load: () => Promise<CommandRun<OptionsOf<O>>>): Registered {
  return {
    spec,
    parse: (name, flags) => {
      const options = typedOptions(name, spec, flags);
      return async (io, args) => (await load())(io, args, options);
    },
  };
}

// The order of `agentbus --help`. Each import() names its entry literally: the build makes each a
// bundle file of its own (scripts/build.js), so nothing a command does not use is loaded.
const COMMANDS: Readonly<Record<string, Registered>> = {
  mcp: command(mcp, async () => (await import('./commands/mcp/index.js')).run),
  status: command(status, async () => (await import('./commands/status/index.js')).run),
  reset: command(reset, async () => (await import('./commands/reset/index.js')).run),
  identity: command(identity, async () => (await import('./commands/identity/index.js')).run),
  inbox: command(inbox, async () => (await import('./commands/inbox/index.js')).run),
  doctor: command(doctor, async () => (await import('./commands/doctor/index.js')).run),
  backup: command(backup, async () => (await import('./commands/backup/index.js')).run),
  guard: command(guard, async () => (await import('./commands/guard/index.js')).run),
  restore: command(restore, async () => (await import('./commands/restore/index.js')).run),
  convert: command(convert, async () => (await import('./commands/convert/index.js')).run),
  tail: command(tail, async () => (await import('./commands/tail/index.js')).run),
  post: command(post, async () => (await import('./commands/post/index.js')).run),
  search: command(search, async () => (await import('./commands/search/index.js')).run),
  memory: command(memory, async () => (await import('./commands/memory/index.js')).run),
  web: command(web, async () => (await import('./commands/web/index.js')).run),
};

const GLOBAL_FLAGS = new Set(['-h', '--help', '-v', '--version']);

function usageError(message: string): CliError {
  return new CliError('usage', message);
}

/** The command's name, or a usage error: no command, a flag before it, or an unknown name. */
function commandOf(argv: readonly string[]): string | undefined {
  const first = argv[0];
  if (first === undefined) throw usageError('no command given; run `agentbus --help` for the commands');
  if (first.startsWith('-')) {
    if (GLOBAL_FLAGS.has(first)) return undefined;
    throw usageError(`unknown option ${first} (the command comes first: agentbus <command> [options]); run \`agentbus --help\` for the commands`);
  }
  if (!(first in COMMANDS)) {
    const near = closestName(first, Object.keys(COMMANDS));
    const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
    throw usageError(`unknown command "${first}"${hint}; run \`agentbus --help\` for the commands`);
  }
  return first;
}

/** Positional arguments must fit the usage (the flags were checked by typedOptions). */
function checkPositional(name: string, spec: CommandSpec, positional: readonly unknown[], flags: Record<string, unknown>): void {
  const allowed = spec.usage.split(/\s+/).filter((word) => word.startsWith('[') || word.startsWith('<')).length;
  const extra = [...positional.slice(allowed), ...((flags._ as unknown[] | undefined) ?? [])].filter((a) => a !== undefined);
  if (extra.length > 0 && !isVariadic(spec)) {
    const takes = allowed === 0 ? 'takes no arguments' : `takes at most ${allowed} argument${allowed === 1 ? '' : 's'} (${spec.usage})`;
    throw usageError(`unexpected argument "${String(extra[0])}": agentbus ${name} ${takes}; run \`agentbus ${name} --help\``);
  }
}

/** True when the usage's last argument takes any number of values (`[...channels]`). */
function isVariadic(spec: CommandSpec): boolean {
  return spec.usage.includes('...');
}

function writeError(io: CliIo, message: string): void {
  io.stderr.write(`agentbus: ${message}\n`);
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    // Usage errors; a command's own failures are mapped by its entry (command-run.ts).
    if (!(error instanceof CliError)) throw error;
    writeError(io, error.message);
    const first = argv[0];
    // A hook command's usage error must not block its harness (exit 2 does in all three).
    if (first !== undefined && Object.hasOwn(COMMANDS, first) && COMMANDS[first]?.spec.hookSafe === true) return 0;
    return EXIT_CODES[error.code];
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const name = commandOf(argv);
  const prog = sade('agentbus');
  if (argv.includes('-v') || argv.includes('--version')) prog.version((await import('../package-version.js')).packageVersion());
  const strings: string[] = [];
  for (const [command, { spec }] of Object.entries(COMMANDS)) {
    prog.command(spec.usage, spec.describe);
    for (const option of spec.options) {
      // A boolean flag gets the default false, so `--force path` keeps `path` positional.
      prog.option(option.flag, option.description, option.kind === 'boolean' ? false : undefined);
      if (option.kind !== 'boolean' && command === name) strings.push(longName(option.flag));
    }
    for (const example of spec.examples) prog.example(example);
  }
  // sade exits the process itself on an unknown flag; throwing from mri's hook keeps control here.
  let badFlag: string | undefined;
  const unknownFlag = new Error('unknown flag');
  let parsed: { args: unknown[]; name: string } | undefined;
  try {
    parsed = prog.parse(['node', 'agentbus', ...argv], {
      lazy: true,
      string: strings,
      unknown: (flag: string) => {
        badFlag = flag;
        throw unknownFlag;
      },
    } as never) as { args: unknown[]; name: string } | undefined;
  } catch (error) {
    if (error !== unknownFlag || badFlag === undefined) throw error;
    const spec = name === undefined ? undefined : COMMANDS[name]?.spec;
    const known = (spec?.options ?? []).map((o) => `--${longName(o.flag)}`);
    const near = closestName(badFlag.replace(/=.*$/, ''), known);
    const help = name === undefined ? 'agentbus --help' : `agentbus ${name} --help`;
    throw usageError(`unknown option ${badFlag}${near === undefined ? '' : ` (did you mean ${near}?)`}; run \`${help}\` for the options`);
  }
  if (parsed === undefined || name === undefined) return 0; // --help or --version was printed
  const { spec, parse } = COMMANDS[name] as Registered;
  const flags = (parsed.args.at(-1) ?? {}) as Record<string, unknown>;
  const positional = parsed.args.slice(0, -1);
  const start = parse(name, flags);
  checkPositional(name, spec, positional, flags);
  const args = isVariadic(spec) ? [...positional, ...((flags._ as unknown[] | undefined) ?? [])] : positional;
  // mri reads a number-like argument (a seq, a post's text "42") as a number; commands get text.
  return start(io, args.filter((a) => a !== undefined).map(String));
}

/**
 * The process entry: real streams, environment and clock. The streams are made when a command
 * first touches them: process.stdin on a pipe (how a harness runs a hook) loads node:net and the
 * streams stack, about 10 ms of a hook command's start-up, and `identity` never reads it.
 */
export async function runFromProcess(): Promise<void> {
  const io: CliIo = {
    get stdin() {
      return process.stdin;
    },
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    env: process.env,
    cwd: process.cwd(),
    homeDir: homedir(),
    clock: systemClock,
    get isTty() {
      return process.stdout.isTTY === true;
    },
    get stdinIsTty() {
      return process.stdin.isTTY === true;
    },
  };
  const code = await main(process.argv.slice(2), io);
  process.exitCode = code;
}
