/**
 * Counters for diagnosing contention in the file layer. Printed to stderr at
 * exit when AGENTBUS_WASM_STATS=1; otherwise only incremented (cheap).
 */
export const vfsStats: Record<string, number> = Object.create(null) as Record<string, number>;

/** Adds `n` to a named counter. */
export function count(name: string, n = 1): void {
  vfsStats[name] = (vfsStats[name] ?? 0) + n;
}

if (process.env.AGENTBUS_WASM_STATS === '1') {
  process.on('exit', () => {
    process.stderr.write(`agentbus wasm stats ${process.pid}: ${JSON.stringify(vfsStats)}\n`);
  });
}
