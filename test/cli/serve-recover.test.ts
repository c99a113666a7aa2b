/**
 * `sendpool serve --recover`: the flag's checks, and the real command on a store whose WAL was
 * deleted after kill -9: refused with exit 2 naming the file and the way out, then started with
 * --recover, which says on standard error what was lost (the intake journal names the contacts:
 * reported FAILED).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveSettings } from '../../src/cli/serve-flags.js';
import { processIo } from '../../src/cli/io.js';
import { api, waitFor } from '../server/helpers.js';
import { BIN, ROOT, scratch, sendpool, startServe } from './helpers.js';

const KEY = 'cli-recover-test-key-company-1';
const fleet = 'examples/fleet.json';

describe('serve --recover flags', () => {
  it('maps to recover, with a note; refused with --memory or --redis', () => {
    expect(serveSettings({ recover: true }, processIo)).toMatchObject({ options: { dataDir: 'sendpool-data', recover: true } });
    expect(serveSettings({ recover: true }, processIo).notes).toEqual([
      '--recover: a damaged or incomplete store in sendpool-data starts from what is intact, and what was lost is reported (docs/server.md, "A damaged store")',
    ]);
    expect(serveSettings({}, processIo).options).not.toHaveProperty('recover');
    expect(() => serveSettings({ recover: true, memory: true }, processIo)).toThrow('--recover: recovers the durable store of --data-dir; there is none with --memory');
    expect(() => serveSettings({ recover: true, redis: 'redis://127.0.0.1:6379' }, processIo)).toThrow('--recover: recovers the durable store of --data-dir; there is none with --redis');
  });

  it('serve --help lists it', () => {
    expect(sendpool('serve', '--help').stdout).toMatch(/--recover\s+start even if the store in --data-dir is damaged or incomplete/);
  });
});

describe('sendpool serve on a damaged store', () => {
  it('is refused (exit 2, the file and what to do), and starts with --recover, saying what was lost', { timeout: 120_000 }, async () => {
    const dir = scratch({});
    const dataDir = join(dir, 'data');
    const env = { SENDPOOL_API_KEYS: `1:${KEY}` };
    // A store with 30 contacts accepted, left by kill -9.
    const child = spawn(process.execPath, [BIN, 'serve', fleet, '--port', '0', '--data-dir', dataDir], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = await new Promise<string>((resolve) => {
      const check = () => {
        const m = /listening on (http:\/\/\S+?),/.exec(stderr);
        if (m) resolve(m[1]!);
      };
      child.stderr.on('data', check);
    });
    const thirty = Array.from({ length: 30 }, (_, i) => ({ phone_number: `5521999${String(100000 + i)}`, template_variables: ['Ana', 'x'] }));
    const accepted = await api(url, '/messenger/messages/', { key: KEY, body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts: thirty } });
    expect(accepted.status).toBe(202);
    expect(accepted.json.accepted).toBe(30);
    child.kill('SIGKILL');
    await exited;
    rmSync(join(dataDir, 'sendpool.db-wal'));

    const refused = sendpool('serve', fleet, '--port', '0', '--data-dir', dataDir);
    expect(refused.code).toBe(2);
    const file = join(dataDir, 'sendpool.db');
    expect(refused.stderr).toContain(`sendpool serve: the durable store ${file} cannot be trusted:\n  - `);
    expect(refused.stderr).toMatch(/the last \d+ are missing \(30 contacts answered 202 and lost, ids 1 to 30\); its WAL .*sendpool\.db-wal is missing or empty/);
    expect(refused.stderr).toContain('Restore the data directory from a backup (all its files), or start with --recover');

    const serving = await startServe([fleet, '--port', '0', '--data-dir', dataDir, '--recover'], env);
    try {
      // Said after the line saying it listens: waited for. The journal names the contacts not sent
      // (the simulated channel may have sent some before the kill: not reported FAILED).
      const said = new RegExp(
        `sendpool serve: ${file.replace(/[/.]/g, '\\$&')} recovered: \\d+ commits? missing; 30 contacts answered 202 and lost, ids 1 to 30; (\\d+ contacts? reported FAILED \\(lost in a damaged store\\), ids \\d+ to \\d+, from the intake journal|the intake journal names no contact to report FAILED); report \\S+sendpool\\.db\\.recovery-\\S+\\.json`,
      );
      await waitFor(() => said.test(serving.stderr()), 'the recovery said on standard error');
      expect(serving.stderr()).toMatch(said);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
    // Recovered: the next start is a normal one.
    const again = await startServe([fleet, '--port', '0', '--data-dir', dataDir], env);
    expect(again.stderr()).not.toContain('recovered');
    expect(await again.stop()).toBe(0);
  });
});
