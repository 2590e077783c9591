/** Small formatting helpers for output a person reads at a glance. */

/** Bytes as B, KiB, MiB or GiB with one decimal. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** A fixed-width bar such as `[#####---------------]` for a fraction in [0, 1] (clamped for display only). */
export function bar(fraction: number, width = 20): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** How long ago `then` was, relative to `now`, e.g. `4s ago`, `3m ago`, `2h ago`. */
export function ago(now: number, then: number): string {
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}

/** Rows of cells as left-aligned columns separated by two spaces, each line indented. */
export function table(rows: readonly (readonly string[])[], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}

/** How long until `then`, relative to `now`, e.g. `in 40s`, `in 12m`, `in 3h`. */
export function remaining(now: number, then: number): string {
  const s = Math.max(0, Math.round((then - now) / 1000));
  if (s < 120) return `in ${s}s`;
  if (s < 7200) return `in ${Math.round(s / 60)}m`;
  return `in ${Math.round(s / 3600)}h`;
}
