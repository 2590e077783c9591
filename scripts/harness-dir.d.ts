// Types of scripts/harness-dir.js for the TypeScript that imports it
// (test/harnesses/support); the script itself stays plain JavaScript.

/** The pinned versions, by npm package name (scripts/harness-versions.json). */
export const HARNESS_VERSIONS: Readonly<Record<string, string>>;

/** Where the harnesses are installed: AGENTBUS_HARNESS_DIR, or a folder per set of pinned versions under the cache. */
export function harnessDir(): string;
