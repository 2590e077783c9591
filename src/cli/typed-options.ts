/**
 * sade's raw flags (mri's `Record<string, unknown>`) turned into the options a command declared
 * (command-spec.ts): each value flag carries exactly one non-empty value, a repeatable one one or
 * more, and a boolean is true or false. A bad flag is a usage error naming it and what it takes.
 */
import { CliError } from './cli-error.js';
import { longName, type CommandSpec, type OptionSpec, type OptionsOf } from './command-spec.js';

function usageError(message: string): CliError {
  return new CliError('usage', message);
}

/** The flag's values as strings; a usage error for a value given twice (unless repeatable) or without a value. */
function valuesOf(command: string, option: OptionSpec, raw: unknown): string[] {
  const key = longName(option.flag);
  if (Array.isArray(raw) && option.kind !== 'repeatable') throw usageError(`--${key} was given ${raw.length} times; give it once`);
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  return values.map((one) => {
    if (typeof one !== 'string' || one === '') throw usageError(`--${key} needs a value: ${option.value ?? 'see agentbus ' + command + ' --help'}`);
    return one;
  });
}

/** The command's typed options from sade's flags (which main.ts had sade read as strings for every value flag). */
export function typedOptions<O extends readonly OptionSpec[]>(command: string, spec: CommandSpec<O>, flags: Record<string, unknown>): OptionsOf<O> {
  const options: Record<string, boolean | string | readonly string[] | undefined> = {};
  for (const option of spec.options) {
    const key = longName(option.flag);
    const raw = flags[key];
    if (option.kind === 'boolean') options[key] = raw === true;
    else if (raw === undefined) options[key] = option.kind === 'repeatable' ? [] : undefined;
    else {
      const values = valuesOf(command, option, raw);
      options[key] = option.kind === 'repeatable' ? values : values[0];
    }
  }
  return options as OptionsOf<O>;
}
