/** What `agentbus restore` tells the user: its refusals, failures and its report line, in one place. */

export const noDriver = (own: string, other: string): string => `no driver can run here to check the backup (${own}; ${other})`;

export const failsIntegrity = (backup: string, problems: readonly string[]): string =>
  `${backup} fails its integrity check (${problems.slice(0, 3).join('; ')}); choose another backup; nothing changed`;

export const cannotRestore = (backup: string, why: string): string => `${backup} cannot be restored here: ${why}; nothing changed`;

export const NO_BACKUP_GIVEN = 'restore needs the backup file, e.g. agentbus restore ~/.local/share/agentbus/backups/agentbus-<time>.db';

export const noSuchFile = (backup: string, backups: string): string => `there is no file ${backup}; \`ls ${backups}\` lists the backups agentbus made`;

export const isTheDatabase = (backup: string): string => `${backup} is the database itself; name a backup file`;

export const foreignFile = (reason: string): string => `refusing to restore: ${reason}`;

export const emptyFile = (backup: string): string => `refusing to restore ${backup}: it is empty`;

export const walBeside = (backup: string): string =>
  `${backup} has a ${backup}-wal beside it, so it may be a live database rather than a backup; make a backup of it with \`agentbus backup\` and restore that`;

/** The report line; `opened` is what opening the restored file added, `aside` where the replaced database is kept (if one was). */
export const restored = (backup: string, path: string, protocol: string, opened: string, aside: string | undefined): string =>
  `restored ${backup} to ${path} (integrity ok, ${protocol} lock protocol${opened})` + (aside === undefined ? '' : `; the database it replaced is kept as ${aside}`);
