import { defineConfig, type TestProjectConfiguration } from 'vitest/config';
import { NOT_ON_POSTGRES } from './test/postgres/not-on-postgres.js';

/**
 * One shared suite, run once per driver: each project sets
 * AGENTBUS_TEST_DRIVER and test files read it through test/support.
 * AGENTBUS_TEST_DRIVERS narrows the list (scripts/test.js runs one driver per
 * vitest run, so totals are reported per driver and per Node version).
 */
const ALL_DRIVERS = ['native', 'wasm'];
const asked = (process.env.AGENTBUS_TEST_DRIVERS ?? ALL_DRIVERS.join(',')).split(',').filter(Boolean);
const drivers = asked.filter((name) => ALL_DRIVERS.includes(name));

/**
 * The postgres driver's project, only when AGENTBUS_TEST_DRIVERS names it
 * (scripts/test.js does): the SQLite projects' set-up (the build and the
 * packed package), then its own, which starts a throwaway PostgreSQL
 * cluster (test/postgres/global-setup.ts), and it runs the whole suite, each
 * bus a database of its own on that cluster (test/support/test-databases.ts),
 * but the files test/postgres/not-on-postgres.ts lists with their reasons
 * (SQLite file only, or pending on postgres), plus its own test/postgres/.
 */
const postgres: TestProjectConfiguration = {
  test: {
    name: 'postgres',
    globalSetup: ['test/support/global-setup.ts', 'test/postgres/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    exclude: [...ALL_DRIVERS.map((other) => `test/${other}/**`), 'test/harnesses/**', ...NOT_ON_POSTGRES.map((entry) => entry.files)],
    env: { AGENTBUS_TEST_DRIVER: 'postgres' },
  },
};

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: drivers.map((name): TestProjectConfiguration => ({
      extends: true,
      test: {
        name,
        include: ['test/**/*.test.ts'],
        // Tests of one driver's internals run in that driver's project only, also
        // when AGENTBUS_TEST_DRIVERS narrows the run to one project (scripts/test.js);
        // the real-harness suite has its own config (vitest.harnesses.config.ts).
        exclude: [...ALL_DRIVERS.filter((other) => other !== name).map((other) => `test/${other}/**`), 'test/harnesses/**', 'test/postgres/**'],
        env: { AGENTBUS_TEST_DRIVER: name },
      },
    })).concat(asked.includes('postgres') ? [postgres] : []),
  },
});
