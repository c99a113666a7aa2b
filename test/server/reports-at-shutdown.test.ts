/**
 * What the channel reports while the server shuts down (src/server/shutdown.ts, turns.ts): a
 * status given as the channel closes is handled, not dropped when the server stops listening to
 * the channel right after; its notification is in the snapshot the server writes on the way out.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Channel, ChannelSink } from '../../src/server/ports/channel.js';
import { api, contacts, startServer, waitFor } from './helpers.js';

describe('reports at shutdown', () => {
  it('a status the channel gives as it closes is handled and kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sendpool-reports-'));
    // A webhook receiver that never answers: the notifications stay in the outbox, so in the snapshot.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    let sink: ChannelSink | undefined;
    let sent: string | undefined;
    const channel: Channel = {
      attach: (s) => void (sink = s),
      send: (m) => {
        sent = m.messageId;
        return Promise.resolve({ status: 'sent' });
      },
      sendSms: () => Promise.resolve({ status: 'failed', reason: 'no SMS here' }),
      // The provider's last word, as the channel closes.
      close: () => sink?.messageStatus({ messageId: sent!, status: 'DEVICE' }),
    };
    const file = join(dir, 'snapshot.json');
    const s = await startServer({ channel, snapshotFile: file, delivery: { requestTimeoutMs: 60_000 } });
    try {
      await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hsm` } });
      expect((await api(s.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: contacts(1) } })).status).toBe(202);
      await waitFor(() => sent !== undefined && s.server.sendpool.engine.stats().sent === 1, 'the contact sent');
    } finally {
      await s.server.close();
      silent.closeAllConnections();
      silent.close();
    }
    // The notifications' bodies are JSON text inside the snapshot's JSON.
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('\\"status\\":\\"SENT\\"');
    expect(text).toContain('\\"status\\":\\"DEVICE\\"');
    rmSync(dir, { recursive: true, force: true });
  });
});
