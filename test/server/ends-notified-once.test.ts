/**
 * A contact's end is notified once, also across a restart from a snapshot taken between a send's
 * result (which notifies the end) and the engine's outcome of that end (taken after it, kept in the
 * snapshot when it had not been taken yet). The server keeps which ends a result notified in its own
 * record, not on the contact the engine holds, and the snapshot keeps that record (`endsNotified`).
 *
 * The gap is made by the shutdown: sends still in flight when the drain gives up are answered when
 * the channel closes, their results handled (FAILED notified), and the snapshot written before the
 * dispatch worker takes their outcomes again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { OutgoingMessage, SendOutcome } from '../../src/core/dispatch/types.js';
import { createEngine } from '../../src/engine.js';
import { readSnapshotFile, type SimulatedChannel, type SnapshotFile } from '../../src/server/index.js';
import { api, contacts, fastChannel, startReceiver, startServer, testFleet, waitFor, type Receiver } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-ends-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A channel that holds every send until it closes, then answers each FAILED (no retries are left). */
function heldUntilClose(): { channel: SimulatedChannel; held: () => number } {
  const base = fastChannel();
  const waiting: ((outcome: SendOutcome) => void)[] = [];
  const channel: SimulatedChannel = {
    ...base,
    send: (_m: OutgoingMessage) => new Promise<SendOutcome>((resolve) => waiting.push(resolve)),
    close: async () => {
      for (const answer of waiting.splice(0)) answer({ status: 'failed', reason: 'closed' });
      await base.close?.();
    },
  };
  return { channel, held: () => waiting.length };
}

/**
 * Five contacts sent and held, the server closed: the snapshot holds each contact's FAILED
 * notification (in the outbox) and the engine's outcome of it (not taken). The receiver stays up.
 */
async function snapshotBetweenResultAndOutcome(name: string) {
  const file = join(dir, name);
  const fleet = testFleet();
  const { channel, held } = heldUntilClose();
  // The drain gives up at once: the held sends are answered by the channel's close.
  const first = await startServer({ fleet, channel, snapshotFile: file, drainTimeoutMs: 1 });
  const receiver = await startReceiver(() => first.server.sendpool.webhookSecret(1));
  try {
    await api(first.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } });
    const body = { business_id: 1, template_type_id: 10, campaign_id: 3, max_retries: 0, contacts: contacts(5) };
    expect((await api(first.url, '/messenger/messages/', { body })).status).toBe(202);
    await waitFor(() => held() === 5, 'the five sends held by the channel');
  } finally {
    await first.server.close();
  }
  const saved = readSnapshotFile(file)!;
  // The gap this test is about: each contact's FAILED went out, its outcome is still the engine's.
  expect((saved.engine as { dispatch?: { outcomes: unknown[] } }).dispatch?.outcomes).toHaveLength(5);
  return { fleet, saved, receiver };
}

/** Restarts from `saved`; answers each FAILED notification's id the receiver got, once all is delivered. */
async function failedAfterRestart(fleet: unknown, saved: SnapshotFile, receiver: Receiver): Promise<number[]> {
  const second = await startServer({ engine: createEngine(fleet, { snapshot: saved.engine }), restore: saved.server });
  try {
    await waitFor(() => second.server.sendpool.idle() && second.server.sendpool.engine.stats().failed === 5, 'the restored outcomes handled and every event delivered');
    expect(second.server.sendpool.snapshot().server.endsNotified).toBeUndefined();
    expect(receiver.badSignatures).toBe(0);
    return receiver
      .all('/hsm')
      .filter((n) => n.status === 'FAILED')
      .map((n) => n.id as number)
      .sort((a, b) => a - b);
  } finally {
    await second.server.close();
    await receiver.close();
  }
}

describe("a contact's end across a restart from a snapshot", () => {
  it('is notified once when the snapshot came between its result and its outcome', async () => {
    const { fleet, saved, receiver } = await snapshotBetweenResultAndOutcome('snapshot.json');
    expect(saved.server.endsNotified).toHaveLength(5);
    expect(await failedAfterRestart(fleet, saved, receiver)).toEqual([1, 2, 3, 4, 5]);
  });

  it('is notified once from a snapshot of an older version, which marked the contact itself (`final: 1`)', async () => {
    const { fleet, saved, receiver } = await snapshotBetweenResultAndOutcome('older.json');
    // As an older version wrote it: no record of the server's, the mark on the outcomes' contacts.
    const { endsNotified: _ends, ...server } = saved.server;
    const engine = JSON.parse(JSON.stringify(saved.engine)) as { dispatch: { outcomes: { contact: { final?: 1 } }[] } };
    for (const o of engine.dispatch.outcomes) o.contact.final = 1;
    const older = { ...saved, server, engine } as unknown as SnapshotFile;
    expect(await failedAfterRestart(fleet, older, receiver)).toEqual([1, 2, 3, 4, 5]);
  });
});
