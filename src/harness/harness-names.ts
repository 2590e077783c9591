/**
 * "Which agent am I working for?" for a process a harness runs (a hook, or a
 * git hook run from the agent's shell tool): the display names held by the
 * `agentbus mcp` servers of the nearest ancestor process that is a recorded
 * harness. No configuration: each server records its harness in its inbox
 * file (see inbox-file.ts).
 */
import { ancestors, type AncestorProcess } from './ancestry.js';
import { readHarnessInbox, type HarnessInbox } from './inbox-file.js';

/** The inbox of the harness that runs this process (or the process whose ancestors are given), if any. */
export function harnessInbox(dataDir: string, chain: readonly AncestorProcess[] = ancestors()): HarnessInbox | undefined {
  return readHarnessInbox(
    dataDir,
    chain.map((p) => p.identity),
  );
}

/**
 * The display names of the harness that runs this process, as its servers
 * last recorded them (within about a second of a change), sorted; empty when
 * no ancestor is a harness with a live agentbus server. Reads only small
 * files in `<dataDir>/inbox/`: no database, fast enough for a git hook.
 */
export function harnessNames(dataDir: string, chain: readonly AncestorProcess[] = ancestors()): string[] {
  const inbox = harnessInbox(dataDir, chain);
  if (inbox === undefined) return [];
  return [...new Set(inbox.files.flatMap((f) => f.names.map((n) => n.name)))].sort();
}
