/**
 * The postgres project's set-up: a throwaway PostgreSQL cluster
 * (scripts/pg-cluster.js: initdb into a temp directory, its own port,
 * password authentication over TCP), stopped and removed at the end. Tests
 * reach it through inject('pgUrl') and make a database of their own
 * (pg-test.ts). It also builds, as the SQLite projects' set-up does.
 */
import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { startCluster } from '../../scripts/pg-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://agentbus:PASSWORD@127.0.0.1:PORT/postgres of the cluster. */
    pgUrl: string;
  }
}

export const TEST_PASSWORD = 'agentbus test password';

export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env.AGENTBUS_TEST_BUILT !== '1') {
    execFileSync(process.execPath, ['scripts/build.js'], { stdio: 'inherit' });
    process.env.AGENTBUS_TEST_BUILT = '1';
  }
  const cluster = await startCluster({ password: TEST_PASSWORD, fsync: false });
  project.provide('pgUrl', cluster.url);
  return () => cluster.stop();
}
