/**
 * How tests run agentbus as a user who installed the package does: an
 * `agentbus` command on PATH (what `npm install -g agentbus-mcp`, `npm link`
 * or `npx --package agentbus-mcp` provide). The command is the one the packed
 * tarball installed (test/support/global-setup.ts), not the checkout's bin.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, inject } from 'vitest';

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
  symlinkSync(join(inject('packedInstall').project, 'node_modules', '.bin', 'agentbus'), command);
  return {
    binDir,
    command,
    path: (nodeBin = process.execPath) => [binDir, dirname(nodeBin), process.env.PATH ?? ''].join(delimiter),
  };
}
