/**
 * Child processes spawned by tests run built code: bin/agentbus.js runs the
 * bundle in dist/bundle/, test fixtures import the compiled modules in dist/.
 * scripts/test.js builds once and sets AGENTBUS_TEST_BUILT; a direct
 * `npx vitest` builds here.
 *
 * The packed package (test/package/): scripts/test.js packs and installs it
 * once for all its runs and names the result in AGENTBUS_TEST_PACKAGE; without
 * it this setup packs and installs into a temp directory, removed afterwards.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { packAndInstall, type PackedInstall } from '../../scripts/pack-install.js';

export type { PackedInstall };

declare module 'vitest' {
  export interface ProvidedContext {
    packedInstall: PackedInstall;
  }
}

/**
 * Built and packed once per vitest process, however many projects (drivers) it
 * runs: each project loads this setup afresh, so the first one records what it
 * made in the environment the later ones read.
 */
export default function setup(project: TestProject): (() => void) | undefined {
  if (process.env.AGENTBUS_TEST_BUILT !== '1') {
    execFileSync(process.execPath, ['scripts/build.js'], { stdio: 'inherit' });
    process.env.AGENTBUS_TEST_BUILT = '1';
  }
  const given = process.env.AGENTBUS_TEST_PACKAGE;
  if (given !== undefined) {
    project.provide('packedInstall', JSON.parse(readFileSync(given, 'utf8')) as PackedInstall);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-package-'));
  const packed = packAndInstall(dir);
  writeFileSync(join(dir, 'packed-install.json'), JSON.stringify(packed));
  process.env.AGENTBUS_TEST_PACKAGE = join(dir, 'packed-install.json');
  project.provide('packedInstall', packed);
  return () => rmSync(dir, { recursive: true, force: true });
}
