// Flags of every command: node:util parseArgs over a table each command exports (so --help and the
// README are checked against the parser: test/cli/help.test.ts), with one-line messages for mistakes:
// `unknown option --prot (did you mean --port?)` in place of parseArgs's hint about positionals.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { closestName } from '../config/suggest.js';

export type FlagTable = NonNullable<ParseArgsConfig['options']>;

export interface ParsedFlags {
  readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly positionals: string[];
}

/** A flag the command does not take, or a flag without its value: exit 2 with this message. */
export class FlagError extends Error {}

/** Parses `args` against `table`; throws FlagError with a one-line message naming the flag. */
export function parseFlags(
  args: readonly string[],
  table: FlagTable,
  allowPositionals: boolean,
): ParsedFlags {
  try {
    return parseArgs({ args: [...args], options: table, allowPositionals, strict: true }) as ParsedFlags;
  } catch (err) {
    throw new FlagError(flagMessage(err as NodeJS.ErrnoException, table));
  }
}

/** parseArgs's errors in our words. */
export function flagMessage(err: NodeJS.ErrnoException, table: FlagTable): string {
  const quoted = /'([^']*)'/.exec(err.message)?.[1] ?? '';
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const hint = suggestFlag(quoted, table);
      return `unknown option ${quoted}${hint === undefined ? '' : ` (did you mean ${hint}?)`}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      // "Option '-p, --port <value>' argument missing": name the long form.
      const flag = /--[^\s<,]+/.exec(quoted)?.[0] ?? quoted.split(' ')[0] ?? quoted;
      return /argument missing/.test(err.message) ? `${flag} needs a value` : `${flag} takes no value`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${quoted}`;
    default:
      return err.message;
  }
}

/** Every spelling the table accepts: `--name` and, where given, `-x`. */
export function flagNames(table: FlagTable): string[] {
  const out: string[] = [];
  for (const [name, o] of Object.entries(table)) {
    out.push(`--${name}`);
    if (o.short !== undefined) out.push(`-${o.short}`);
  }
  return out;
}

/**
 * The flag `typed` most likely meant: the only one it is a prefix of (`--po` -> `--port`), else the
 * nearest long flag within 2 edits (a third of its length for short names); undefined when none is close.
 */
export function suggestFlag(typed: string, table: FlagTable): string | undefined {
  const name = typed.replace(/^-+/, '').split('=')[0]!;
  const near = closestName(name, Object.keys(table));
  return near === undefined ? undefined : `--${near}`;
}
