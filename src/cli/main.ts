/**
 * The `agentbus` command line: sade commands, each in its own module, loaded
 * only when that command runs (a hook command such as `identity` must start
 * about as fast as a bare node). Errors become one line on stderr and an exit
 * code scripts can rely on.
 */
import { homedir } from 'node:os';
import sade from 'sade';
import { systemClock } from '../clock.js';
import { closestName } from '../did-you-mean.js';
import { CliError, EXIT_CODES } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import type { CommandRun } from './command-run.js';

interface OptionSpec {
  /** As sade takes it: `--name` or `-n, --name`. */
  readonly flag: string;
  readonly description: string;
  /** A flag without a value (`--json`); the others take exactly one value. */
  readonly boolean?: true;
  /** For a value flag: what the value is, for the error when it is missing (e.g. "a path"). */
  readonly value?: string;
  /** A value flag that may be given more than once (`--channel a --channel b`); the command gets a string or an array. */
  readonly multiple?: true;
}

interface CommandSpec {
  readonly usage: string;
  readonly describe: string;
  readonly options: readonly OptionSpec[];
  readonly examples: readonly string[];
  /** Imports the command's entry: nothing a command does not use is loaded. */
  readonly load: () => Promise<CommandRun>;
  /** Run by harness hooks: a usage error exits 0, because exit 2 blocks the harness (Claude Code, Codex, Gemini CLI). */
  readonly hookSafe?: true;
}

const CONFIG_OPTION: OptionSpec = {
  flag: '--config',
  description: 'Path of the config file (default ~/.config/agentbus/config.json, or AGENTBUS_CONFIG)',
  value: 'a path, e.g. --config ~/.config/agentbus/config.json',
};

/** Appended to every command's description: the exit codes scripts may rely on. */
const EXIT_TEXT = 'Exit codes: 0 done, 1 failed, 2 usage error, 3 refused (nothing changed).';

const JSON_LINES_OPTION: OptionSpec = { flag: '--json', description: 'Print one JSON object per message, one per line (the fields receive returns)', boolean: true };
const SINCE_OPTION: OptionSpec = {
  flag: '--since',
  description: 'Only messages from this time on: an age (30s, 10m, 2h, 1d) or an ISO date and time',
  value: 'an age or a date, e.g. --since 10m or --since 2026-11-30T12:00:00Z',
};

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  mcp: {
    usage: 'mcp',
    describe: `Run the MCP stdio server (what a harness spawns). stdout carries JSON-RPC only. ${EXIT_TEXT}`,
    options: [CONFIG_OPTION],
    examples: ['mcp', 'mcp --config ~/.config/agentbus/config.json'],
    load: async () => (await import('./commands/mcp/index.js')).run,
  },
  status: {
    usage: 'status',
    describe: `Show live sessions, channels, live file reservations, usage against the budget, the current notice, the embedding backlog, the config path, the data directory, the driver and lock protocol. Never creates the database. ${EXIT_TEXT}`,
    options: [CONFIG_OPTION, { flag: '--json', description: 'Print one JSON object instead of text', boolean: true }],
    examples: ['status', 'status --json', 'status --config ./agentbus.json'],
    load: async () => (await import('./commands/status/index.js')).run,
  },
  reset: {
    usage: 'reset',
    describe: `Wipe all bus data (channels, messages, memories, sessions) in one transaction, after warning about live sessions and asking for confirmation on a terminal. The file is kept; running agents recover by registering again. Without a terminal it refuses (exit 3) unless --yes is given. ${EXIT_TEXT}`,
    options: [CONFIG_OPTION, { flag: '-y, --yes', description: 'Do not ask: wipe (for scripts)', boolean: true }],
    examples: ['reset', 'reset --yes'],
    load: async () => (await import('./commands/reset/index.js')).run,
  },
  identity: {
    usage: 'identity',
    describe: `Print the one-line registration prompt for this directory (for a SessionStart hook), from .local/agentbus.json. Reads neither the config nor the database. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--json', description: 'Print it as SessionStart hook JSON (hookSpecificOutput.additionalContext), the form Gemini CLI passes to the model', boolean: true },
    ],
    examples: ['identity', 'identity --json'],
    load: async () => (await import('./commands/identity/index.js')).run,
  },
  inbox: {
    usage: 'inbox',
    describe: `Print what is unread for the agent of the harness session running this command (its names are found through the process tree: no configuration). For hooks: nothing is printed when nothing is unread; --hook reads the hook's JSON on stdin and answers in that event's format (Claude Code and Codex: UserPromptSubmit, PostToolUse, Stop; Gemini CLI: BeforeAgent, AfterTool, AfterAgent; Cursor: stop). Read-only and always exits 0, so a hook never breaks its harness; problems go to stderr and the log.`,
    options: [
      CONFIG_OPTION,
      { flag: '--hook', description: "Read the hook's JSON from stdin and answer in its event's format", boolean: true },
      {
        flag: '--wait',
        description: 'With --hook on a stop event: wait up to this many seconds (at most 3600) for a message before letting the agent stop',
        value: 'a number of seconds, e.g. --wait 600',
      },
    ],
    examples: ['inbox', 'inbox --hook', 'inbox --hook --wait 600'],
    hookSafe: true,
    // A bundle of its own: a hook runs it after every tool call.
    load: async () => (await import('./commands/inbox/index.js')).run,
  },
  doctor: {
    usage: 'doctor',
    describe: `Check the config, data directory permissions, file system and free disk, the database's lock protocol, integrity (the bus tables; every page with --full) and -wal, and stale locks: those of dead processes, and those of processes in another container or sandbox whose lease expired; offers to clear (or revoke) only those (--fix does so without asking). Exits 1 when a problem remains. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--json', description: 'Print one JSON object {ok, checks: [{name, status, message}]} instead of text', boolean: true },
      { flag: '--fix', description: 'Clear stale locks of dead processes, and revoke expired leases, without asking', boolean: true },
      { flag: '--full', description: 'Check every page (PRAGMA integrity_check: seconds per hundred MiB) instead of the quick check of the bus tables', boolean: true },
    ],
    examples: ['doctor', 'doctor --json', 'doctor --full', 'doctor --fix'],
    load: async () => (await import('./commands/doctor/index.js')).run,
  },
  backup: {
    usage: 'backup [path]',
    describe: `Write a consistent copy of the database with VACUUM INTO, safe while agents run, and check its integrity before it appears at the path. Default path: <data directory>/backups/agentbus-<time>.db. Refuses an existing file (exit 3) unless --force. Restore one with \`agentbus restore <file>\`. ${EXIT_TEXT}`,
    options: [CONFIG_OPTION, { flag: '-f, --force', description: 'Overwrite an existing file at the path', boolean: true }],
    examples: ['backup', 'backup ~/agentbus-before-upgrade.db', 'backup /tmp/bus.db --force'],
    load: async () => (await import('./commands/backup/index.js')).run,
  },
  guard: {
    usage: 'guard',
    describe: `The git pre-commit check: refuse (exit 3) a commit whose staged files another live agent reserved exclusively, naming holder, pattern and reason; anything broken in agentbus warns and exits 0. --pre-push checks the commits being pushed instead (refs on stdin, as git gives a pre-push hook). --install writes the repository's pre-commit and pre-push hooks. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--install', description: 'Write the repository\'s pre-commit and pre-push hooks (refuses to replace a hook agentbus did not write)', boolean: true },
      { flag: '--pre-push', description: 'Check the commits being pushed (git\'s pre-push refs on stdin) instead of the staged files', boolean: true },
      { flag: '--remote', description: 'The remote being pushed to (the pre-push hook passes its $1; the commits checked are those on no remote-tracking branch)', value: 'a remote name, e.g. --remote origin' },
      { flag: '--as', description: 'The committing agent\'s display name (default: AGENTBUS_AS, else the harness session, else .local/agentbus.json)', value: 'a display name, e.g. --as Sam2' },
    ],
    examples: ['guard --install', 'guard', 'guard --as Sam2', 'guard --pre-push --remote origin < refs'],
    load: async () => (await import('./commands/guard/index.js')).run,
  },
  restore: {
    usage: 'restore [backup]',
    describe: `Put a backup in place of the database: checks the backup's integrity and schema first, refuses (exit 3) while any process has the database open, keeps the current database (with its -wal) in <data directory>/backups/agentbus-<time>-replaced.db, removes the -shm and lock files, then opens the restored file. ${EXIT_TEXT}`,
    options: [CONFIG_OPTION],
    examples: ['restore ~/.local/share/agentbus/backups/agentbus-2026-11-30T12-00-00-000Z.db'],
    load: async () => (await import('./commands/restore/index.js')).run,
  },
  convert: {
    usage: 'convert',
    describe: `Convert the database to the other lock protocol: posix (native driver, node:sqlite) or portable (wasm driver). Refuses (exit 3) while any process has the database open; stop every agentbus process first. Checkpoints the WAL, rewrites the header with the target driver and verifies the file with it. ${EXIT_TEXT}`,
    options: [CONFIG_OPTION, { flag: '--to', description: 'The target lock protocol: portable or posix', value: 'portable or posix, e.g. --to portable' }],
    examples: ['convert --to portable', 'convert --to posix'],
    load: async () => (await import('./commands/convert/index.js')).run,
  },
  tail: {
    usage: 'tail [...channels]',
    describe: `Show the recent messages (all channels and direct messages, or the channels named), then follow new ones as they commit, like tail -f; replies are shown under their thread, direct messages as "direct → NAMES". A pure reader: never registers, never moves a cursor, never takes the writer lock. Stop with Ctrl-C. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--channel', description: 'Only this channel (repeatable; same as naming it)', value: 'a channel name, e.g. --channel general', multiple: true },
      { flag: '--sender', description: 'Only messages from this display name (repeatable)', value: 'a display name, e.g. --sender Alice', multiple: true },
      { flag: '--direct', description: 'Only direct messages (between agents, or from people)', boolean: true },
      { flag: '--to', description: 'Only direct messages addressed to this display name (repeatable)', value: 'a display name, e.g. --to Sam2', multiple: true },
      SINCE_OPTION,
      { flag: '-n, --lines', description: `How many recent messages to show first (default ${20}; with --since, all since then)`, value: 'a count, e.g. --lines 50' },
      { flag: '--once', description: 'Print the recent messages and exit instead of following', boolean: true },
      JSON_LINES_OPTION,
    ],
    examples: ['tail', 'tail general reviews', 'tail --sender Alice --since 1h', 'tail --direct', 'tail --to Sam2 --once', 'tail --json --once'],
    load: async () => (await import('./commands/tail/index.js')).run,
  },
  post: {
    usage: 'post [channel] [text]',
    describe: `Send a message to a channel, or with --to a direct message to one or more agents, as a person, through the same path as the send tool (inspection hook, rate limit, capacity, idempotency), so agents receive it like any other message. Without text (or with -), the text is read from stdin. The name is registered for the send and released after it. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--as', description: 'The name to post as (default: the OS user name, $USER)', value: 'a name, e.g. --as Dana' },
      { flag: '--to', description: 'Send a direct message to this display name instead of a channel (repeatable, at most 16); only they receive it', value: 'a display name, e.g. --to Sam2', multiple: true },
      { flag: '--reply-to', description: 'The seq of the message this answers (shown under its thread)', value: 'a message seq, e.g. --reply-to 42' },
      { flag: '--idempotency-key', description: 'Send at most once for this key: a retry with the same key and text returns the first seq', value: 'a key, e.g. --idempotency-key deploy-42' },
      { flag: '--json', description: 'Print {seq, as, channel} ({seq, as, to} with --to; memory_id, revision on a memory channel) as JSON', boolean: true },
    ],
    examples: ['post general "deploy is frozen until 14:00"', 'post --to Sam2 "run the tests on your branch and tell me"', 'post reviews --reply-to 42 "looks good"', 'git log -1 | agentbus post general', 'post general --as Dana "hello"'],
    load: async () => (await import('./commands/post/index.js')).run,
  },
  search: {
    usage: 'search [...words]',
    describe: `Search messages and memories like the search tool: words (bm25), meaning when an embeddings endpoint is configured, or both fused; best first. Reads only; never registers. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--mode', description: 'text, semantic (memories only) or both (default: both with an endpoint, else text)', value: 'text, semantic or both' },
      { flag: '--channel', description: 'Only this channel', value: 'a channel name, e.g. --channel general' },
      { flag: '--sender', description: 'Only messages from this display name', value: 'a display name, e.g. --sender Alice' },
      SINCE_OPTION,
      { flag: '--until', description: 'Only messages before this time: an age (2h) or an ISO date and time', value: 'an age or a date, e.g. --until 1d' },
      { flag: '--thread', description: 'Only this message and the replies under it', value: 'a message seq, e.g. --thread 42' },
      { flag: '--direct', description: 'Only direct messages (a person sees all of them)', boolean: true },
      { flag: '--count', description: 'How many results (default 100, at most 1000)', value: 'a count, e.g. --count 20' },
      { flag: '--continuation', description: 'The next page: the value a previous search printed', value: 'the continuation a search printed' },
      { flag: '--json', description: "Print the search tool's result as one JSON object", boolean: true },
    ],
    examples: ['search flaky test', 'search "release checklist" --channel memory', 'search tests --direct', 'search deploy --since 1d --json'],
    load: async () => (await import('./commands/search/index.js')).run,
  },
  memory: {
    usage: 'memory [action] [id]',
    describe: `Read the shared memories: list (the live ones, most recently changed first), show ID (the live revision, as get_memory returns it) or history ID (every stored revision, the live one marked). Reads only; never registers. ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--channel', description: 'list: only this memory channel', value: 'a channel name, e.g. --channel memory' },
      { flag: '-n, --lines', description: 'list: at most this many (default 100)', value: 'a count, e.g. --lines 20' },
      { flag: '--json', description: 'One JSON object per memory or revision, one per line', boolean: true },
    ],
    examples: ['memory', 'memory list --channel memory', 'memory show 42', 'memory history 42 --json'],
    load: async () => (await import('./commands/memory/index.js')).run,
  },
  web: {
    usage: 'web',
    describe: `Serve the web console on 127.0.0.1 until Ctrl-C: live sessions, channels with their messages as they commit, threads, memories and their revisions, search, capacity and notices, file reservations; post, reply, edit or delete a memory from the page. Prints the URL to open, with a token made for this run that every request must carry. Everything the page needs is served by agentbus (works offline). ${EXIT_TEXT}`,
    options: [
      CONFIG_OPTION,
      { flag: '--port', description: 'The port on 127.0.0.1 (default 0: any free port)', value: 'a port number, e.g. --port 7420' },
      { flag: '--as', description: 'The name posts and memory edits are sent as (default: the OS user name)', value: 'a display name, e.g. --as Dana' },
    ],
    examples: ['web', 'web --port 7420', 'web --as Dana'],
    load: async () => (await import('./commands/web/index.js')).run,
  },
};

const GLOBAL_FLAGS = new Set(['-h', '--help', '-v', '--version']);

/** The long name of a flag spec: `-y, --yes` -> `yes`. */
const longName = (flag: string): string => /--([\w-]+)/.exec(flag)?.[1] ?? flag;

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

/** Value flags must carry exactly one non-empty value; positional arguments must fit the usage. */
function checkArguments(name: string, spec: CommandSpec, positional: readonly unknown[], flags: Record<string, unknown>): void {
  for (const option of spec.options) {
    if (option.boolean) continue;
    const key = longName(option.flag);
    const value = flags[key];
    if (value === undefined) continue;
    if (Array.isArray(value) && option.multiple !== true) throw usageError(`--${key} was given ${value.length} times; give it once`);
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one !== 'string' || one === '') throw usageError(`--${key} needs a value: ${option.value ?? 'see agentbus ' + name + ' --help'}`);
    }
  }
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
    if (first !== undefined && Object.hasOwn(COMMANDS, first) && COMMANDS[first]?.hookSafe === true) return 0;
    return EXIT_CODES[error.code];
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const name = commandOf(argv);
  const prog = sade('agentbus');
  if (argv.includes('-v') || argv.includes('--version')) prog.version((await import('../package-version.js')).packageVersion());
  const strings: string[] = [];
  for (const [command, spec] of Object.entries(COMMANDS)) {
    prog.command(spec.usage, spec.describe);
    for (const option of spec.options) {
      // A boolean flag gets the default false, so `--force path` keeps `path` positional.
      prog.option(option.flag, option.description, option.boolean ? false : undefined);
      if (!option.boolean && command === name) strings.push(longName(option.flag));
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
    const spec = name === undefined ? undefined : COMMANDS[name];
    const known = (spec?.options ?? []).map((o) => `--${longName(o.flag)}`);
    const near = closestName(badFlag.replace(/=.*$/, ''), known);
    const help = name === undefined ? 'agentbus --help' : `agentbus ${name} --help`;
    throw usageError(`unknown option ${badFlag}${near === undefined ? '' : ` (did you mean ${near}?)`}; run \`${help}\` for the options`);
  }
  if (parsed === undefined || name === undefined) return 0; // --help or --version was printed
  const spec = COMMANDS[name] as CommandSpec;
  const flags = (parsed.args.at(-1) ?? {}) as Record<string, unknown>;
  const positional = parsed.args.slice(0, -1);
  checkArguments(name, spec, positional, flags);
  const command = await spec.load();
  const args = isVariadic(spec) ? [...positional, ...((flags._ as unknown[] | undefined) ?? [])] : positional;
  // mri reads a number-like argument (a seq, a post's text "42") as a number; commands get text.
  return command(io, args.filter((a) => a !== undefined).map(String), flags);
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
