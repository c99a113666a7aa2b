/**
 * A webhook receiver the dead-letter tests switch: while `failing` it answers every delivery 500
 * with a body (so the outbox dead-letters them), else 204. It records what it accepted, with the
 * `webhook-id` header (the event id), in arrival order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SwitchedReceiver {
  readonly url: string;
  failing: boolean;
  /** Deliveries answered 500. */
  refused: number;
  /** Deliveries accepted: event id, path, payload. */
  readonly accepted: { readonly id: string; readonly path: string; readonly payload: any }[];
  close(): Promise<void>;
}

export async function startSwitchedReceiver(): Promise<SwitchedReceiver> {
  const accepted: SwitchedReceiver['accepted'][number][] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (receiver.failing) {
        receiver.refused++;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver broken');
        return;
      }
      accepted.push({ id: String(req.headers['webhook-id']), path: req.url ?? '/', payload: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const receiver: SwitchedReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failing: true,
    refused: 0,
    accepted,
    close: async () => {
      const done = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await done;
    },
  };
  return receiver;
}
