/**
 * What a command declares once, in its folder's spec.ts: its usage, help text and options. The
 * registry (main.ts) builds sade's help and argument checks from it, and turns sade's raw flags
 * into the typed options the command's run receives (`OptionsOf`), so no command reads an
 * `unknown` flag. A spec file imports only this file and common-options.ts: main.ts loads every
 * spec on every start, a hook command's too.
 */

/** boolean: `--json`; value: exactly one value (`--as Dana`); repeatable: one or more (`--to a --to b`). */
export type OptionKind = 'boolean' | 'value' | 'repeatable';

export interface OptionSpec {
  /** As sade takes it: `--name` or `-n, --name`. */
  readonly flag: string;
  /** Whether it takes no value, one, or one each time it is given. */
  readonly kind: OptionKind;
  /** The line `--help` shows. */
  readonly description: string;
  /** For a value flag: what the value is, for the error when it is missing (e.g. "a path, e.g. --config ..."). */
  readonly value?: string;
  /** Refused: the registry's old spelling of `kind: 'boolean'` (a const type parameter checks no excess property, this does). */
  readonly boolean?: never;
  /** Refused: the old spelling of `kind: 'repeatable'`. */
  readonly multiple?: never;
}

export interface CommandSpec<O extends readonly OptionSpec[] = readonly OptionSpec[]> {
  /** The command and its positional arguments, as sade takes it: `post [channel] [text]`; `...` marks a variadic last one. */
  readonly usage: string;
  /** The description `--help` shows. */
  readonly describe: string;
  /** Every option the command takes; any other is a usage error. */
  readonly options: O;
  /** Example command lines (without `agentbus`), shown by `--help`. */
  readonly examples: readonly string[];
  /** Run by harness hooks: a usage error exits 0, because exit 2 blocks the harness (Claude Code, Codex, Gemini CLI). */
  readonly hookSafe?: true;
}

/** The long name of a flag spec: `-y, --yes` -> `yes`. */
export type LongName<F extends string> = F extends `${string}--${infer N}` ? N : never;

type ValueOf<K extends OptionKind> = K extends 'boolean' ? boolean : K extends 'value' ? string | undefined : readonly string[];

/** The options a command's run receives: a boolean for each boolean flag, the value (or undefined) of a value flag, every value of a repeatable one ([] when absent). */
export type OptionsOf<O extends readonly OptionSpec[]> = { readonly [S in O[number] as LongName<S['flag']>]: ValueOf<S['kind']> };

/** A spec, its option literals kept so that `OptionsOf<typeof spec.options>` names each flag. */
export function defineCommand<const O extends readonly OptionSpec[]>(spec: CommandSpec<O>): CommandSpec<O> {
  return spec;
}

/** The long name of a flag spec at run time: `-y, --yes` -> `yes`. */
export function longName(flag: string): string {
  return /--([\w-]+)/.exec(flag)?.[1] ?? flag;
}
