/** Whether a write resolved (true) or failed (false): for answers that say "not written" without the cause. */
export function succeeded(write: Promise<unknown>): Promise<boolean> {
  return write.then(
    () => true,
    () => false,
  );
}
