/**
 * The chaos receiver in a worker thread (startChaosReceiverThread in webhook-chaos.ts): the
 * in-process receiver, reporting to the main thread every 20 ms what its healthy path took (each
 * event's contact and status).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startChaosReceiver, type ThreadReport } from './webhook-chaos.js';

const port = parentPort!;
let events: [string, unknown, number][] = [];
const receiver = await startChaosReceiver(
  () => (workerData as { secret: string }).secret,
  // Only what the record reads (the contact and its status): the main thread is the server
  // measured, and decoding whole payloads there took from it.
  (id, payload, at) => {
    const { id: contact, status } = payload as { id: number; status: string };
    events.push([id, { id: contact, status }, at]);
  },
);
let duplicates = 0;
const report = (): void => {
  const message: ThreadReport = { events, duplicates: receiver.duplicates - duplicates, badSignatures: receiver.badSignatures, hits: { ...receiver.hits } };
  duplicates = receiver.duplicates;
  events = [];
  port.postMessage(message);
};
const timer = setInterval(report, 20);
port.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  report();
  void receiver.close().then(() => port.close());
});
port.postMessage({ url: receiver.url });
