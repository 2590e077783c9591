/**
 * The postgres project's set-up: a throwaway PostgreSQL cluster
 * (scripts/pg-cluster.js: initdb into a temp directory, its own port,
 * password authentication over TCP), stopped and removed at the end. Tests
 * reach it through inject('pgUrl') and make a database of their own
 * (pg-test.ts). It runs after the SQLite projects' set-up, which builds and
 * packs (vitest.config.ts).
 */
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
  const cluster = await startCluster({ password: TEST_PASSWORD, fsync: false });
  project.provide('pgUrl', cluster.url);
  return () => cluster.stop();
}
