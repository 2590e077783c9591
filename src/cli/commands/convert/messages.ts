/** What `agentbus convert` tells the user: its refusals, failures and its report line, in one place. */

/** --to missing or not a protocol. */
export const badTarget = (to: string | undefined): string =>
  `--to must be portable or posix (got ${to === undefined ? 'nothing' : JSON.stringify(to)}), e.g. agentbus convert --to portable`;

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
