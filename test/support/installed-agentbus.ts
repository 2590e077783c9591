/**
 * How tests run agentbus as a user who installed the package does: an
 * `agentbus` command on PATH (what `npm install -g agentbus-mcp`, `npm link`
 * or `npx --package agentbus-mcp` provide).
 *
 * Until the packed-tarball install for tests lands, the checkout's
 * bin/agentbus.js stands in for the installed command: this is the one place
 * to point at the installed package instead.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { AGENTBUS_BIN } from './mcp-process.js';

export interface InstalledAgentbus {
  /** The directory holding the `agentbus` command. */
  readonly binDir: string;
  /** The `agentbus` command's path. */
  readonly command: string;
  /** A PATH on which `agentbus` is that command and `node` is `nodeBin` (default: the test's own Node). */
  path(nodeBin?: string): string;
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An `agentbus` command on a fresh PATH directory, removed after the current test. */
export function installedAgentbus(): InstalledAgentbus {
  const binDir = mkdtempSync(join(tmpdir(), 'agentbus-bin-'));
  made.push(binDir);
  const command = join(binDir, 'agentbus');
  symlinkSync(AGENTBUS_BIN, command);
  return {
    binDir,
    command,
    path: (nodeBin = process.execPath) => [binDir, dirname(nodeBin), process.env.PATH ?? ''].join(delimiter),
  };
}
