/**
 * A full disk, for real: the durable server's data directory on a 3 MB tmpfs (mounting needs root;
 * skipped otherwise). Requests come until a write fails: the server fails closed, the request's
 * 503 and the fatal log line both say the disk is full (not SQLite's "cannot rollback - no
 * transaction is active", which hid the cause), later requests get the same 503, and the store
 * left behind opens again with every request answered 202.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStorage, runServer } from '../../src/server/index.js';
import { KEY_1, api, contacts, quietProvider, testFleet } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'sendpool-disk-full-'));
const mountPoint = join(root, 'small');
const mounted = process.getuid?.() === 0 && spawnSync('mkdir', ['-p', mountPoint]).status === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mountPoint]).status === 0;
afterAll(() => {
  // Lazily: libsql closes its files when the connection is collected.
  if (mounted) spawnSync('umount', ['-l', mountPoint]);
  rmSync(root, { recursive: true, force: true });
});

describe('durable server on a full disk', () => {
  it.skipIf(!mounted)('fails closed with "disk full" in the 503 and the log line; what was answered 202 is kept', { timeout: 120_000 }, async () => {
    const fleetFile = join(root, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(testFleet()));
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          ...chunk
            .toString()
            .split('\n')
            .filter((l) => l.length > 0),
        );
        done();
      },
    });
    const dataDir = join(mountPoint, 'data');
    const provider = quietProvider();
    const running = await runServer({
      fleetFile,
      port: 0,
      dataDir,
      apiKeys: [{ key: KEY_1, companyId: 1 }],
      channel: provider.channel(),
      logger: { level: 'error', stream },
      handleSignals: false,
      metrics: false,
    });
    let accepted = 0;
    let refused: { status: number; json: { error: { code: string; message: string } } } | undefined;
    try {
      for (let r = 0; r < 400 && refused === undefined; r++) {
        const res = await api(running.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: r + 1, contacts: contacts(200, r * 1000) } });
        if (res.status === 202) accepted += 200;
        else refused = res;
      }
      expect(refused).toBeDefined();
      expect(refused!.status).toBe(503);
      // The write its 202 waited for failed, or one before it did (a send's result) and intake closed.
      expect([
        "The server could not write the request durably (the server's disk is full); nothing was accepted. Send it again later.",
        "The server stopped taking requests: its durable writes fail (the server's disk is full); nothing was accepted. Send it again to another instance or later.",
      ]).toContain(refused!.json.error.message);
      const fatal = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]!.msg).toMatch(
        new RegExp(
          `^durable write failed: disk full: cannot write ${join(dataDir, 'sendpool.db').replace(/[/.]/g, '\\$&')} \\(SQLITE_FULL: .*\\); nothing of this step was written: free space on its file system and restart; intake and sending stopped`,
        ),
      );
      expect(fatal[0]!.msg).not.toContain('cannot rollback');
      // Closed for good: the next request is refused the same way.
      const next = await api(running.address, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 999, contacts: contacts(1, 999_000) } });
      expect(next.status).toBe(503);
      expect(next.json.error.message).toContain("the server's disk is full");
    } finally {
      await running.close();
    }
    expect(accepted).toBeGreaterThan(0);
    // The store opens again (its seal agrees) with every contact answered 202.
    const storage = await openSqliteStorage(dataDir);
    try {
      expect(storage.load()!.rows.counts.submitted).toBeGreaterThanOrEqual(accepted);
    } finally {
      storage.close();
    }
  });
});
