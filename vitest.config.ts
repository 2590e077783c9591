import { defineConfig } from 'vitest/config';

/**
 * One shared suite, run once per driver: each project sets
 * AGENTBUS_TEST_DRIVER and test files read it through test/support. A driver
 * is listed here only once it exists, so nothing is reported green while skipped.
 */
const drivers = (process.env.AGENTBUS_TEST_DRIVERS ?? 'native').split(',').filter(Boolean);

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: drivers.map((name) => ({
      extends: true,
      test: {
        name,
        include: ['test/**/*.test.ts'],
        // Tests of one driver's internals run in that driver's project only.
        exclude: drivers.filter((other) => other !== name).map((other) => `test/${other}/**`),
        env: { AGENTBUS_TEST_DRIVER: name },
      },
    })),
  },
});
