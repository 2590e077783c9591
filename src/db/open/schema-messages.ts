/**
 * What a person is told when the database's schema and this agentbus's
 * differ: the one place for those sentences (the newer-schema refusal of
 * every opener, the reading commands' older-schema refusal, doctor's schema
 * check). Each says which side to upgrade.
 */

/**
 * The refusal of a database whose schema is newer than this agentbus: upgrade this side; what a restore would cost
 * (`backups`: the driver's capability, the data directory's backups/ for a file, the server's own for 'external').
 */
export function newerSchemaMessage(version: number, known: number, backups: 'vacuum-into' | 'external' = 'vacuum-into'): string {
  const restoring = backups === 'external' ? 'Restoring a dump from before that upgrade' : "Restoring a backup from the data directory's backups/ folder";
  return (
    `the database is at schema version ${version}, newer than this agentbus knows (${known}): a newer agentbus upgraded it. ` +
    'Upgrade this agentbus to the version the other sessions run (`npm install -g agentbus-mcp@latest`, or `git pull && npm ci` in a checkout), then start it again. ' +
    `${restoring} instead would lose every message, memory and reservation written since that upgrade, ` +
    'and the newer agentbus would upgrade it again at its next start'
  );
}

/** Why a reading command stops at an older schema, and who upgrades it. */
export function olderSchemaMessage(version: number, known: number, command: string): string {
  return (
    `the database is at schema version ${version}, older than this agentbus (${known}): agentbus processes of an older version are probably still using it. ` +
    `\`agentbus ${command}\` only reads and never upgrades it, because an older agentbus that starts after an upgrade is refused. ` +
    `It is upgraded (after a backup) when an \`agentbus mcp\` of this version starts, e.g. in a new harness session: do that once every session can run this version, ` +
    `or run \`agentbus ${command}\` of the older version meanwhile`
  );
}

/** doctor's sentence for an older schema: not a problem, the next server of this version upgrades it (after a backup, unless the database is on a server, whose backups are its own). */
export function olderSchemaNote(version: number, known: number, backedUp = true): string {
  return (
    `schema version ${version}, older than this agentbus (${known}): the next \`agentbus mcp\` of this version upgrades it${backedUp ? ' (backing it up first)' : ''}, ` +
    'and agentbus processes of the older version that start after that are refused: upgrade them too'
  );
}
