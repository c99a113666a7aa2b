/**
 * A Redis script called with arguments its codec cannot write, or answering what its codec cannot
 * read: a bug of this copy of sendpool (the script and its codec disagree), never a state of Redis
 * to recover from. Named after the script, so the log says which one.
 */

const SCRIPT_ERROR = Symbol.for('sendpool.RedisScriptError');

/** A script's arguments or reply do not fit its codec (scripts/codec.ts). */
export class RedisScriptError extends Error {
  readonly [SCRIPT_ERROR] = true;
  /** The script's name (its file under src/server/backends/redis/scripts/). */
  readonly script: string;

  constructor(script: string, message: string) {
    super(`Redis script ${script}: ${message}`);
    this.name = 'RedisScriptError';
    this.script = script;
  }
}

/** True when `e` is a {@link RedisScriptError}, from this copy of sendpool or another. */
export function isRedisScriptError(e: unknown): e is RedisScriptError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[SCRIPT_ERROR] === true;
}
