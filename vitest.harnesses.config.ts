import { defineConfig } from 'vitest/config';

/**
 * The real-harness suite (test/harnesses/): Claude Code, Codex and Gemini CLI
 * binaries from scripts/install-harnesses.js, driven headless against a
 * model stand-in on 127.0.0.1. Run once per driver like the main suite;
 * `npm run test:harnesses` (after `npm run harnesses:install`).
 */
const drivers = (process.env.AGENTBUS_TEST_DRIVERS ?? 'native,wasm').split(',').filter(Boolean);

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: drivers.map((name) => ({
      extends: true,
      test: {
        name: `harnesses-${name}`,
        include: ['test/harnesses/**/*.test.ts'],
        env: { AGENTBUS_TEST_DRIVER: name },
      },
    })),
  },
});
