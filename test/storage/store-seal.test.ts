/**
 * The seal beside the durable store (src/storage/store-seal.ts) and what the open makes of it:
 * a torn write spoils one slot only; a store without a seal (written before seals) opens and gets
 * one; a seal of another store, or an unreadable one, is refused and recovered from.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../src/server/index.js';
import { readSeal, SealWriter } from '../../src/storage/store-seal.js';

const root = mkdtempSync(join(tmpdir(), 'sendpool-seal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const state = (commit: number) => ({ storeId: '0123456789abcdef0123456789abcdef', commit, nextContactId: commit * 10 + 1, nextSeq: commit + 1, submitted: commit * 10 });

describe('the seal', () => {
  it('keeps the newer good slot: a torn write of one slot leaves the commit before', () => {
    const file = join(root, 'a.seal');
    const w = new SealWriter(file);
    w.reset(state(0));
    for (let c = 1; c <= 5; c++) w.write(state(c));
    w.close();
    expect(readSeal(file)).toEqual({ kind: 'ok', seal: state(5) });
    // Commit 5 is in slot 1 (bytes 64..127): torn, the seal says 4.
    const bytes = readFileSync(file);
    bytes.fill(0, 100, 110);
    writeFileSync(file, bytes);
    expect(readSeal(file)).toEqual({ kind: 'ok', seal: state(4) });
    bytes.fill(0, 10, 20);
    writeFileSync(file, bytes);
    expect(readSeal(file)).toEqual({ kind: 'damaged', size: 128 });
    expect(readSeal(join(root, 'none.seal'))).toEqual({ kind: 'absent' });
  });

  it('a store without a seal opens and gets one; one of another store or unreadable is refused, then recovered', async () => {
    const dir = join(root, 'store');
    const other = join(root, 'other');
    for (const d of [dir, other]) {
      const s = await openSqliteStorage(d);
      s.write({ values: { nextContactId: 11 } });
      s.close();
    }
    const seal = join(dir, 'sendpool.db.seal');
    expect(readSeal(seal)).toMatchObject({ kind: 'ok', seal: { commit: 1, nextContactId: 11 } });
    rmSync(seal);
    const again = await openSqliteStorage(dir);
    expect(again.load()?.values.get('nextContactId')).toBe(11);
    again.close();
    expect(readSeal(seal)).toMatchObject({ kind: 'ok', seal: { commit: 1 } });

    copyFileSync(join(other, 'sendpool.db.seal'), seal);
    await expect(openSqliteStorage(dir)).rejects.toThrow(/sendpool\.db is store [0-9a-f]{32} but .*sendpool\.db\.seal is the seal of store [0-9a-f]{32}: the database file was replaced by another/);
    writeFileSync(seal, Buffer.alloc(128, 7));
    await expect(openSqliteStorage(dir)).rejects.toThrow(/sendpool\.db\.seal \(128 bytes\) cannot be read \(both of its copies fail their checksum\)/);
    const recovered = await openSqliteStorage(dir, { recover: true });
    expect(recovered.recovery).toMatchObject({ lostCommits: 0, sealUnreadable: true, lostRows: [] });
    expect(recovered.load()?.values.get('nextContactId')).toBe(11);
    recovered.close();
    const normal = await openSqliteStorage(dir);
    expect(normal.recovery).toBeUndefined();
    normal.close();
  });
});
