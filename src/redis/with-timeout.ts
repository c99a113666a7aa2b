import { RedisTimeoutError } from './errors.js';

/**
 * A Redis call that does not answer within its time is an error, {@link RedisTimeoutError} (the
 * caller treats it as Redis down). A rejection that is not an `Error` (a foreign value) is wrapped in one.
 */
export function withTimeout<T>(p: Promise<T>, ms: number, what = 'Redis call'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new RedisTimeoutError(what, ms)), ms);
    timer.unref?.();
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
