import type { ServerContext } from '../context.js';

/** On a durable server, waits until the change is written; false when it could not be. */
export async function written(ctx: ServerContext): Promise<boolean> {
  if (!ctx.durability) return true;
  try {
    await ctx.durability.commit();
    return true;
  } catch {
    return false;
  }
}

/**
 * On the server on Redis, waits until the blocklist's changes are written for every instance; false
 * when Redis could not take them (they stay pending and are written with the next renewal).
 */
export async function blocklistWritten(ctx: ServerContext): Promise<boolean> {
  if (!ctx.redis) return written(ctx);
  try {
    await ctx.redis.blocklist.sync();
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a durable write failed, for a 503's message: a full disk is named (SQLITE_FULL, ENOSPC:
 * storage/store-open.ts), anything else stays the server's own business (its log line).
 */
export function notWrittenBecause(e: unknown): string {
  return typeof e === 'object' && e !== null && (e as { diskFull?: unknown }).diskFull === true ? " (the server's disk is full)" : '';
}
