/**
 * Why a durable write failed, for a 503's message: a full disk is named (SQLITE_FULL, ENOSPC:
 * storage/store-open.ts), anything else stays the server's own business (its log line).
 */
export function notWrittenBecause(e: unknown): string {
  return typeof e === 'object' && e !== null && (e as { diskFull?: unknown }).diskFull === true ? " (the server's disk is full)" : '';
}
