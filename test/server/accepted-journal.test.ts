/**
 * The accepted journal (src/server/backends/redis/accepted-journal.ts) on a real file: what is added and not
 * done is read back, in order; done records are compacted away once they dominate, so the file
 * follows what is not done; a tail cut in the middle of a line, or a damaged line, is skipped and
 * counted, never thrown; a header of another version is refused naming the file.
 */
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStateFileError } from '../../src/runtime/state-file-error.js';
import { ACCEPTED_JOURNAL_VERSION, AcceptedJournal, acceptedJournalPath, type JournalEntry } from '../../src/server/backends/redis/accepted-journal.js';
import type { ChunkBody } from '../../src/server/backends/redis/queue.js';
import { tempDir } from '../temp-dirs.js';

function body(requestId: string, firstId: number, n = 3): ChunkBody {
  return {
    requestId,
    companyId: 1,
    businessId: 1,
    typeId: 10,
    campaignId: 7,
    maxRetries: 0,
    retryInterval: 0,
    contacts: Array.from({ length: n }, (_, i) => ({
      id: firstId + i,
      costCenterId: 0,
      phone: `5521990000${String(firstId + i).padStart(3, '0')}`,
      variables: ['x'],
      data: { ref: `r${firstId + i}` },
    })),
  };
}

function entry(k: number, epoch = 'e1'): JournalEntry {
  return { stream: `sendpool:{queue}:c:1:${k % 2}`, entryId: `${1_700_000_000_000 + k}-0`, epoch, body: body(`req-${k}`, k * 10) };
}

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

describe('the accepted journal', () => {
  it('is kept beside the state file', () => {
    expect(acceptedJournalPath('/var/lib/sendpool/redis-state.json')).toBe('/var/lib/sendpool/redis-state.accepted.jsonl');
    expect(acceptedJournalPath('/srv/state')).toBe('/srv/state.accepted.jsonl');
  });

  it('reads back what was added and not done, in order, with its epoch and body', () => {
    const path = join(tempDir('sendpool-journal-'), 'redis-state.accepted.jsonl');
    const { journal, entries, damaged } = AcceptedJournal.open(path);
    expect(entries).toEqual([]);
    expect(damaged).toBe(0);
    const all = Array.from({ length: 6 }, (_, k) => entry(k, k < 3 ? 'e1' : 'e2'));
    journal.add(all.slice(0, 4));
    // As intake adds them: with the JSON the queue's step wrote, not made again.
    journal.add(all.slice(4).map((e) => ({ ...e, json: JSON.stringify(e.body) })));
    journal.done([all[1]!, all[4]!, { stream: 'other', entryId: '1-0' }]);
    expect(journal.live).toBe(4);
    const again = AcceptedJournal.open(path);
    expect(again.damaged).toBe(0);
    expect(again.entries).toEqual([all[0], all[2], all[3], all[5]]);
    // Opened again, the file holds the header and the chunks not done only.
    expect(lines(path)).toHaveLength(5);
    expect(JSON.parse(lines(path)[0]!)).toEqual({ journal: 'sendpool-accepted', version: ACCEPTED_JOURNAL_VERSION });
    expect((statSync(path).mode & 0o777).toString(8)).toBe('600');
  });

  it('compacts once done records dominate: the file follows what is not done', () => {
    const path = join(tempDir('sendpool-journal-'), 'j.accepted.jsonl');
    const { journal } = AcceptedJournal.open(path, 50);
    let next = 0;
    const live: JournalEntry[] = [];
    let most = 0;
    // 2,000 chunks pass through, at most 20 not done at a time.
    while (next < 2000) {
      const batch = Array.from({ length: 10 }, () => entry(next++));
      journal.add(batch);
      live.push(...batch);
      if (live.length > 20) journal.done(live.splice(0, 10));
      most = Math.max(most, lines(path).length);
    }
    // Header + 20 live + at most 50 done records and the 50 adds they killed (+ one batch of adds).
    expect(most).toBeLessThanOrEqual(1 + 20 + 100 + 10);
    expect(journal.records).toBeLessThanOrEqual(130);
    expect(AcceptedJournal.open(path).entries.map((e) => e.entryId)).toEqual(live.map((e) => e.entryId));

    // Many not done: compaction waits until done records outnumber them.
    const path2 = join(tempDir('sendpool-journal-'), 'k.accepted.jsonl');
    const j2 = AcceptedJournal.open(path2, 10).journal;
    const many = Array.from({ length: 300 }, (_, k) => entry(k));
    j2.add(many);
    j2.done(many.slice(0, 100));
    expect(lines(path2)).toHaveLength(1 + 300 + 100);
    j2.done(many.slice(100, 160));
    // 160 done ≥ 140 not done: written again with the 140 only.
    expect(lines(path2)).toHaveLength(1 + 140);
    expect(AcceptedJournal.open(path2).entries).toEqual(many.slice(160));
  });

  it('skips a tail cut by a kill and a damaged line, counts them, and appends cleanly after', () => {
    const path = join(tempDir('sendpool-journal-'), 'redis-state.accepted.jsonl');
    const { journal } = AcceptedJournal.open(path);
    const all = Array.from({ length: 5 }, (_, k) => entry(k));
    journal.add(all);
    // A write cut in the middle of its last line (a kill during the append).
    truncateSync(path, statSync(path).size - 40);
    const cut = AcceptedJournal.open(path);
    expect(cut.damaged).toBe(1);
    expect(cut.entries).toEqual(all.slice(0, 4));
    // The cut line was dropped by the compaction at open: an append after it reads whole.
    cut.journal.add([entry(9)]);
    const after = AcceptedJournal.open(path);
    expect(after.damaged).toBe(0);
    expect(after.entries).toEqual([...all.slice(0, 4), entry(9)]);

    // A damaged line in the middle (bytes flipped), a record of no known kind, a body that is not a chunk.
    const text = lines(path);
    text[2] = text[2]!.replace('"op":"add"', '"op"#"add"');
    writeFileSync(path, `${text.join('\n')}\n`);
    appendFileSync(path, `${JSON.stringify({ op: 'move', stream: 's', entry: '1-0' })}\n${JSON.stringify({ op: 'add', stream: 's', entry: '2-0', epoch: 'e1', body: { contacts: 3 } })}\n`);
    const damaged = AcceptedJournal.open(path);
    expect(damaged.damaged).toBe(3);
    expect(damaged.entries).toEqual([all[0], ...all.slice(2, 4), entry(9)]);
  });

  it('refuses a journal of another version, naming the file', () => {
    const path = join(tempDir('sendpool-journal-'), 'redis-state.accepted.jsonl');
    writeFileSync(path, `${JSON.stringify({ journal: 'sendpool-accepted', version: 2 })}\n`);
    expect(() => AcceptedJournal.open(path)).toThrow(`accepted journal ${path}: $.version: expected 1, got 2`);
    const refused = (() => {
      try {
        AcceptedJournal.open(path);
      } catch (e) {
        return e;
      }
    })();
    expect(isStateFileError(refused)).toBe(true);
    expect(refused).toMatchObject({ file: path, field: '$.version', expected: '1', actual: '2' });
  });
});
