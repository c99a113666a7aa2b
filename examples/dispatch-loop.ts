import type { Engine, OutgoingMessage, SendOutcome } from 'sendpool';

/** The host's side: hand a message to the provider, resolve with what the provider said. */
export type Channel = (message: OutgoingMessage) => Promise<SendOutcome>;

/**
 * Runs the dispatch loop until nothing is left to do. `sleepUntil` is the host's timer:
 * `(t) => new Promise((r) => setTimeout(r, t - Date.now()))` in a server, a manual clock in tests.
 */
export async function runDispatchLoop(engine: Engine, channel: Channel, sleepUntil: (t: number) => Promise<void>): Promise<void> {
  for (;;) {
    const ready = engine.poll({ limit: 1000 });
    // Send a batch concurrently; report every outcome under its message id.
    await Promise.all(
      ready.map(async (message) => {
        let outcome: SendOutcome;
        try {
          outcome = await channel(message);
        } catch (error) {
          outcome = { status: 'failed', reason: String(error) }; // unknown failure: a contact retry
        }
        engine.report(message.messageId, outcome);
      }),
    );
    for (const outcome of engine.takeOutcomes()) {
      // Terminal outcomes (sent, failed, expired, rejected): notify, count, persist.
      void outcome;
    }
    const wakeAt = engine.nextWakeAt();
    if (wakeAt === null) return; // idle: call again after the next submit
    await sleepUntil(wakeAt);
  }
}
