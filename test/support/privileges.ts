/**
 * Running a child as root without the capabilities that let root ignore file
 * modes and owners, so tests of another user's files and of mode bits mean
 * the same as for an ordinary user. Still uid 0, so the checkout stays
 * readable wherever CI cloned it.
 */

/** True when the tests run as root, where permission tests must drop capabilities to mean anything. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Spawn command and arguments that run `command` without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (util-linux setpriv). */
export function withoutDacOverride(command: string, args: readonly string[]): [string, string[]] {
  return ['setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', command, ...args]];
}
