/**
 * A Redis script with its codec: the one place its KEYS and ARGV are written and its reply is read,
 * so callers speak in named arguments and named results. Each script of the redis backend is a file
 * of this folder declaring one (a header saying its KEYS, ARGV and reply, the Lua, `encode` and `decode`).
 */
import { runScript, script, type RedisScriptClient, type Script } from '../../../../redis/script-runner.js';
import { RedisScriptError } from './errors.js';
import { composeLua, type LuaModule } from './lua.js';

/** What one call sends: its keys and its arguments, in Redis' order. */
export interface ScriptCall {
  readonly keys: readonly string[];
  readonly argv: readonly (string | number)[];
}

/** A script and its codec (see the file's comment). */
export interface RedisScript<Args, Result> {
  readonly name: string;
  readonly script: Script;
  encode(args: Args): ScriptCall;
  /** Reads a reply; throws {@link RedisScriptError} for one of another shape. */
  decode(reply: unknown): Result;
}

/** Declares a script: its Lua is the modules it uses (composeLua) and its body. */
export function defineScript<Args, Result>(definition: {
  readonly name: string;
  readonly uses?: readonly LuaModule[];
  readonly body: string;
  readonly encode: (args: Args) => ScriptCall;
  readonly decode: (reply: unknown, read: ReplyReader) => Result;
}): RedisScript<Args, Result> {
  const read = replyReader(definition.name);
  return {
    name: definition.name,
    script: script(composeLua(definition.uses ?? [], definition.body)),
    encode: definition.encode,
    decode: (reply) => definition.decode(reply, read),
  };
}

/** Runs a script with named arguments and answers its named result. */
export async function callScript<Args, Result>(client: RedisScriptClient, s: RedisScript<Args, Result>, args: Args): Promise<Result> {
  const { keys, argv } = s.encode(args);
  return s.decode(await runScript(client, s.script, keys, argv));
}

/** Readers of the parts of a reply, each throwing {@link RedisScriptError} (naming the script) on another shape. */
export interface ReplyReader {
  list(reply: unknown, what: string): readonly unknown[];
  text(reply: unknown, what: string): string;
  texts(reply: unknown, what: string): string[];
  int(reply: unknown, what: string): number;
  /** A list of `size`-long tuples (Lua tables of fixed length). */
  tuples(reply: unknown, size: number, what: string): (readonly unknown[])[];
  /** A flat list of field, value, … (HGETALL's answer) as pairs. */
  pairs(reply: unknown, what: string): [string, string][];
  /** Throws: `reply` is none of the shapes the script answers. */
  unexpected(reply: unknown, what: string): never;
}

function replyReader(name: string): ReplyReader {
  const fail = (what: string, expected: string, got: unknown): never => {
    throw new RedisScriptError(name, `${what}: expected ${expected}, got ${describe(got)}`);
  };
  const list = (reply: unknown, what: string): readonly unknown[] => (Array.isArray(reply) ? reply : fail(what, 'a list', reply));
  const text = (reply: unknown, what: string): string => (typeof reply === 'string' ? reply : fail(what, 'a string', reply));
  const reader: ReplyReader = {
    list,
    text,
    texts: (reply, what) => list(reply, what).map((v, i) => text(v, `${what}[${i}]`)),
    int: (reply, what) => (typeof reply === 'number' && Number.isInteger(reply) ? reply : fail(what, 'an integer', reply)),
    tuples: (reply, size, what) =>
      list(reply, what).map((t, i) => {
        const tuple = list(t, `${what}[${i}]`);
        return tuple.length === size ? tuple : fail(`${what}[${i}]`, `${size} values`, tuple);
      }),
    pairs: (reply, what) => {
      const flat = reader.texts(reply, what);
      if (flat.length % 2 !== 0) fail(what, 'field and value pairs', flat);
      const out: [string, string][] = [];
      for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
      return out;
    },
    unexpected: (reply, what) => fail(what, 'a reply of the script', reply),
  };
  return reader;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (v === null) return 'nil';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'number' || typeof v === 'boolean' ? `${typeof v} ${v}` : typeof v;
}
