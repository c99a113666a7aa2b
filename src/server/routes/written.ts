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
