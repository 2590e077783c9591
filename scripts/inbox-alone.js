#!/usr/bin/env node
// `agentbus inbox` without the CLI around it: imports only the command's
// module, for scripts/bench-push.js to tell its own cost from the cost of
// the CLI entry's other imports.
import { homedir } from 'node:os';
import module from 'node:module';

module.enableCompileCache?.();
const { inboxCommand } = await import('../dist/src/cli/inbox-command.js');
const args = process.argv.slice(2);
process.exitCode = await inboxCommand(
  {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    homeDir: homedir(),
    clock: { now: () => Date.now() },
    isTty: process.stdout.isTTY === true,
    stdinIsTty: process.stdin.isTTY === true,
  },
  { hook: args.includes('--hook') },
);
