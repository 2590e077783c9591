/** What `agentbus convert` tells the user: its refusals, failures and its report line, in one place. */

/** --to missing or not a protocol. */
export const badTarget = (to: string | undefined): string =>
  `--to must be portable, posix or postgres (got ${to === undefined ? 'nothing' : JSON.stringify(to)}), e.g. agentbus convert --to portable, or agentbus convert --to postgres postgres://user@host:5432/agentbus`;

export const noDatabase = (path: string): string => `nothing to convert: there is no database at ${path}`;

export const foreignFile = (reason: string): string => `refusing to convert: ${reason}`;

export const emptyFile = (path: string): string => `nothing to convert: ${path} is empty`;

export const alreadyConverted = (path: string, to: string): string => `${path} already uses the ${to} lock protocol; nothing to do`;

export const targetDriverMissing = (to: string, driver: string, reason: string): string =>
  `converting to ${to} needs the ${driver} driver, which cannot run here: ${reason}; nothing changed`;

export const verifyingStep = (driver: string): string => `verifying with the ${driver} driver ...`;

export const failsIntegrity = (path: string, problems: readonly string[]): string =>
  `${path} fails its integrity check after converting (${problems.slice(0, 3).join('; ')})`;

/** The report line; `setting` is the advice to change a driver setting that names the old driver, if any. */
export const converted = (path: string, from: string, to: string, driver: string, setting: string | undefined): string =>
  `converted ${path} from the ${from} to the ${to} lock protocol (integrity ok); agentbus now opens it with the ${driver} driver` +
  (setting === undefined ? '' : `: ${setting}`);

/** A URL given for a lock-protocol conversion, which takes none. */
export const urlWithoutPostgres = (to: string): string => `convert --to ${to} takes no URL; a URL goes with --to postgres (agentbus convert --to postgres postgres://user@host:5432/agentbus)`;

/** `--to postgres` without the database's URL. */
export const urlMissing = (): string =>
  '--to postgres needs the URL of an empty PostgreSQL database after it, e.g. agentbus convert --to postgres postgres://user@host:5432/agentbus';

/** The URL argument is not a usable database URL (never echoing it: it may hold a password). */
export const badUrl = (problem: string): string => `the URL ${problem}; nothing changed`;

/** The bus's schema is behind this agentbus's: the copy needs the same schema on both sides. */
export const sourceSchemaOlder = (version: number, known: number): string =>
  `the bus is at schema version ${version} and this agentbus writes ${known}: upgrade it first (start \`agentbus mcp\` once, or run \`agentbus backup\`, which upgrades it), then convert again; nothing changed`;

/** The copy's progress line: rows of one table. */
export const copyStep = (table: string, copied: number, total: number): string => `copying ${table}: ${copied} of ${total} rows ...`;

/** The report line of a copy into PostgreSQL, and how to switch to it. */
export const copied = (path: string, where: string, rows: number, lastSeq: number): string =>
  `copied ${path} into ${where}: ${rows} rows, messages up to seq ${lastSeq}; ${path} is unchanged. ` +
  'To move the bus there, set database_url (or AGENTBUS_DATABASE_URL) to this URL for every agentbus that should use it; agents carry on where they were';
