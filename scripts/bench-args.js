// Command-line flags of the benchmark scripts: `--name value` pairs and bare `--name` switches.
const argv = process.argv.slice(2);

/** The value after `--name`; `fallback` when the flag, or its value, is absent. */
export function flag(name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
}

/** True when the bare switch `--name` is given. */
export function hasSwitch(name) {
  return argv.includes(`--${name}`);
}
