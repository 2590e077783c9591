/**
 * `agentbus guard`: the git pre-commit check (exit 0 allow, 3 refuse), its
 * pre-push form (`--pre-push`: the commits being pushed), and
 * `agentbus guard --install` to put both into the repository's hooks.
 *
 * The check never blocks a commit or push because agentbus itself is
 * broken: a missing, locked, damaged or foreign database, a bad config, git
 * failing, any internal error: all warn on stderr and exit 0. Only a path
 * covered by another agent's live exclusive reservation refuses. A Node that
 * cannot read the bus hands the check to one that can (guard-node.ts).
 *
 * It is loaded only for `guard` (src/cli/entries/guard.ts) and imports only
 * what the check needs (no MCP server, no embeddings): it runs on every commit.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { repositoryLabel } from '../../../bus/reservations-repository.js';
import type { LockProtocol } from '../../../db/contract/driver.js';
import { harnessNames } from '../../../harness/harness-names.js';
import { packageRoot } from '../../../package-root.js';
import { CliError, EXIT_CODES } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { commandConfig, configFlag } from '../../cli-config.js';
import { checkCommit } from './guard-check.js';
import { committingAgent } from './guard-committer.js';
import { installGuard } from './guard-install.js';
import * as messages from './messages.js';
import { COMMIT, PUSH, type Checked } from './messages.js';
import { busProtocol, cannotCheckText, findReadingNode, HANDOVER_ENV, thisNodeReads } from './guard-node.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus guard` takes (its spec.ts). */
export type GuardOptions = OptionsOf<typeof spec.options>;



function readAll(stream: Readable): Promise<string> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', () => done(Buffer.concat(chunks).toString('utf8')));
  });
}

/** The guard's own arguments again, for a Node it hands the check to. */
function guardArgs(options: GuardOptions): string[] {
  const args = ['guard'];
  if (options['pre-push']) args.push('--pre-push');
  for (const name of ['as', 'config', 'remote'] as const) {
    const value = options[name];
    if (value !== undefined) args.push(`--${name}`, value);
  }
  return args;
}

/** This Node cannot read the bus: run the same check under one that can, or say loudly that nothing is checked. */
function handOver(io: CliIo, options: GuardOptions, protocol: LockProtocol, dataDir: string, checked: Checked, input: string): number {
  const node = io.env[HANDOVER_ENV] === undefined ? findReadingNode(protocol, io.env) : undefined;
  if (node === undefined) {
    io.stderr.write(messages.allowing(cannotCheckText(protocol, dataDir), checked.what));
    return 0;
  }
  const run = spawnSync(node, [join(packageRoot(), 'bin', 'agentbus.js'), ...guardArgs(options)], {
    cwd: io.cwd,
    env: { ...io.env, [HANDOVER_ENV]: '1' },
    input,
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  if (run.status === EXIT_CODES.refused) return EXIT_CODES.refused;
  if (run.status !== 0) io.stderr.write(messages.handOverFailed(node, run.status ?? run.signal, checked.what));
  return 0;
}

async function check(io: CliIo, options: GuardOptions): Promise<number> {
  const now = io.clock.now();
  const prePush = options['pre-push'];
  const checked = prePush ? PUSH : COMMIT;
  const pushed = prePush ? await readAll(io.stdin) : undefined;
  const config = commandConfig(io, options);
  const committer = committingAgent(io.env, io.cwd, options.as, () => harnessNames(config.data_directory));
  const verdict = await checkCommit({ cwd: io.cwd, env: io.env, config, committer, clock: io.clock, ...(pushed === undefined ? {} : { pushed }) });
  if (verdict.kind === 'wrong_node') return handOver(io, options, verdict.protocol, config.data_directory, checked, pushed ?? '');
  if (verdict.kind === 'unchecked') {
    io.stderr.write(messages.allowing(verdict.reason, checked.what));
    return 0;
  }
  if (verdict.kind === 'allowed') return 0;
  const repository = repositoryLabel(verdict.hits[0]!.reservation.repository);
  io.stderr.write(messages.refusalText(checked, verdict.hits, committer, repository, now));
  return EXIT_CODES.refused;
}

/** The Node the hooks should run: this one, unless it cannot read the existing bus and another on PATH can. */
async function hookNode(io: CliIo, options: GuardOptions): Promise<string> {
  const dataDir = commandConfig(io, options).data_directory;
  const protocol = busProtocol(dataDir);
  if (protocol === undefined || (await thisNodeReads(protocol))) return process.execPath;
  const other = findReadingNode(protocol, io.env);
  if (other !== undefined) {
    io.stderr.write(messages.hooksRunOther(process.version, protocol, other));
    return other;
  }
  io.stderr.write(`agentbus guard: ${cannotCheckText(protocol, dataDir)}\n`);
  return process.execPath;
}

async function install(io: CliIo, options: GuardOptions): Promise<number> {
  const config = configFlag(options);
  const node = await hookNode(io, options);
  const written = installGuard(io.cwd, io.env, { configPath: config === undefined ? undefined : resolve(io.cwd, config), node });
  for (const hook of written) {
    const what =
      hook.kind === 'pre-commit'
        ? 'commits whose staged files another agent reserved exclusively are refused; `git commit --no-verify` skips the check'
        : 'pushes whose commits change files another agent reserved exclusively are refused; `git push --no-verify` skips the check';
    io.stdout.write(`${hook.updated ? 'updated' : 'installed'} ${hook.path}: ${what}\n`);
  }
  return 0;
}

export async function guardCommand(io: CliIo, options: GuardOptions): Promise<number> {
  if (options.install) return install(io, options);
  try {
    return await check(io, options);
  } catch (error) {
    // The guard must never be the reason a commit fails: whatever broke, say so and let it through.
    const what = error instanceof CliError ? error.message : `${(error as Error)?.name ?? 'Error'}: ${(error as Error)?.message ?? String(error)}`;
    io.stderr.write(messages.allowing(`could not check file reservations (${what})`, options['pre-push'] ? 'push' : 'commit'));
    return 0;
  }
}
