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

/** The whole number after `--name` (`fallback` when absent); anything else, or one below `min`, stops the script naming the flag. */
export function countFlag(name, fallback, min) {
  const value = Number(flag(name, fallback));
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number of at least ${min}, not ${flag(name)}`);
  return value;
}
