/**
 * Flags of every command through `node:util` parseArgs, strict: an unknown flag, a missing value
 * or a missing positional argument is a {@link UsageError} naming the flag and the value.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import { DURATION_SYNTAX, parseDuration } from './duration.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly positionals: string[];
}

/** Parses `argv` for `command`; `--help` is always accepted. */
export function parse(command: string, argv: readonly string[], options: Options): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals };
  } catch (e) {
    throw new UsageError(`${describeParseError(e)} (see sendpool ${command} --help)`);
  }
}

function describeParseError(e: unknown): string {
  const error = e as { code?: string; message?: string };
  const message = error.message ?? String(e);
  const flag = /'(-[^']*)'/.exec(message)?.[1];
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${flag ?? message}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (flag && /does not take an argument/.test(message)) return `flag ${flag.split(' ')[0]} takes no value`;
      return flag ? `flag ${flag.split(' ')[0]} needs a value` : message;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument: ${message}`;
    default:
      return message;
  }
}

/** The one positional FLEET argument. */
export function fleetArgument(command: string, positionals: readonly string[]): string {
  if (positionals.length === 0) throw new UsageError(`missing FLEET: the path of a fleet description (see sendpool ${command} --help)`);
  if (positionals.length > 1) throw new UsageError(`expected one FLEET argument, got ${positionals.length}: ${positionals.map((p) => JSON.stringify(p)).join(' ')}`);
  return positionals[0]!;
}

function flagValue(flag: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`--${flag}: expected a value`);
  return value;
}

/** A required positive integer flag (`--business`, `--type`). */
export function requiredId(flag: string, value: unknown): number {
  const text = flagValue(flag, value);
  if (text === undefined) throw new UsageError(`missing --${flag} ID`);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`--${flag}: expected a positive integer id, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** `--messages N`: a whole number, 1 or more; `1000000`, `1_000_000` and `1,000,000` are accepted. */
export function requiredCount(flag: string, value: unknown, max: number): number {
  const text = flagValue(flag, value);
  if (text === undefined) throw new UsageError(`missing --${flag} N`);
  const clean = text.replace(/[_,]/g, '');
  const n = Number(clean);
  if (!/^[0-9]+$/.test(clean) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new UsageError(`--${flag}: expected a whole number from 1 to ${max.toLocaleString('en-US')}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** An optional duration flag. */
export function optionalDuration(flag: string, value: unknown): number | undefined {
  const text = flagValue(flag, value);
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`--${flag}: expected ${DURATION_SYNTAX}, got ${JSON.stringify(text)}`);
  return ms;
}

/** Values of a repeatable string flag. */
export function many(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}
