/**
 * The intake journal (src/storage/intake-journal.ts): what is appended is read back, a cut or
 * damaged tail is ignored from the first bad record on, segments rotate past their size and are
 * deleted once every submission they recorded has ended, and what the journal says against what a
 * database holds names exactly the submissions it lost.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IntakeJournal, journalFiles, journalLoss, readJournal } from '../../src/storage/intake-journal.js';

const root = mkdtempSync(join(tmpdir(), 'sendpool-journal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(mkdtempSync(join(root, `j${n++}-`)), 'sendpool.db');

/** A submission's contacts as the database keeps them. */
function contacts(seq: number, count: number, companyId = 1): string {
  return JSON.stringify(
    Array.from({ length: count }, (_, i) => ({
      phone: `55219${String(seq * 1000 + i).padStart(8, '0')}`,
      id: seq * 1000 + i,
      requestId: `r${seq}`,
      companyId,
      costCenterId: 0,
      data: { ref: `s${seq}c${i}` },
    })),
  );
}

describe('the intake journal', () => {
  it('reads back what was appended: submissions with their commit and campaign, ends, the latest webhooks', () => {
    const file = fresh();
    const j = new IntakeJournal(file);
    j.committed({ commit: 1, accepted: [[1, 7, contacts(1, 3)]], ended: [], webhooks: '[{"companyId":1,"config":{"url_hsm_callback":"http://a"},"secret":"s"}]' });
    j.committed({ commit: 2, accepted: [[2, 8, contacts(2, 2)]], ended: [], webhooks: '[{"companyId":1,"config":{"url_hsm_callback":"http://a"},"secret":"s"}]' });
    j.committed({ commit: 3, accepted: [], ended: [1] });
    j.committed({ commit: 4, accepted: [], ended: [] });
    expect(j.openSubmissions).toBe(1);
    j.close();
    const read = readJournal(file);
    expect([...read.submissions.values()].map((s) => [s.seq, s.commit, s.campaignId, JSON.parse(s.contacts).length])).toEqual([
      [1, 1, 7, 3],
      [2, 2, 8, 2],
    ]);
    expect(JSON.parse(read.submissions.get(2)!.contacts)).toEqual(JSON.parse(contacts(2, 2)));
    expect([...read.ended]).toEqual([[1, 3]]);
    expect(JSON.parse(read.webhooks!)).toEqual([{ companyId: 1, config: { url_hsm_callback: 'http://a' }, secret: 's' }]);
    expect(read.cut).toEqual([]);
  });

  it('ignores a cut tail and everything from a record whose checksum fails', () => {
    const file = fresh();
    const j = new IntakeJournal(file);
    for (let c = 1; c <= 10; c++) j.committed({ commit: c, accepted: [[c, 1, contacts(c, 5)]], ended: [] });
    j.close();
    const [segment] = journalFiles(file);
    const whole = readFileSync(segment!);
    // Cut in the middle of the last record: the nine before it are read.
    truncateSync(segment!, whole.length - 20);
    let read = readJournal(file);
    expect([...read.submissions.keys()]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(read.cut).toEqual([{ file: segment, ignored: expect.any(Number) }]);
    // A byte flipped in the fifth record: the four before it are read, nothing after.
    const flipped = Buffer.from(whole);
    const at = flipped.indexOf(Buffer.from('"s5c2"'));
    flipped[at + 2] = flipped[at + 2]! ^ 0x01;
    writeFileSync(segment!, flipped);
    read = readJournal(file);
    expect([...read.submissions.keys()]).toEqual([1, 2, 3, 4]);
  });

  it('rotates past its segment size, carries the webhooks into each segment, and deletes segments whose submissions all ended', () => {
    const file = fresh();
    const j = new IntakeJournal(file, { segmentBytes: 4096 });
    const hooks = '[{"companyId":1,"config":{"url_hsm_callback":"http://a"},"secret":"s"}]';
    j.committed({ commit: 1, accepted: [], ended: [], webhooks: hooks });
    for (let c = 2; c <= 40; c++) j.committed({ commit: c, accepted: [[c, 1, contacts(c, 10)]], ended: [] });
    const segments = journalFiles(file).length;
    expect(segments).toBeGreaterThan(5);
    for (const f of journalFiles(file)) expect(statSync(f).size).toBeLessThan(4096 + 2000);
    // Everything but submission 40 ends: only its segment and the one written stay.
    j.committed({ commit: 41, accepted: [], ended: Array.from({ length: 38 }, (_, i) => i + 2) });
    expect(journalFiles(file).length).toBeLessThanOrEqual(2);
    expect(j.openSubmissions).toBe(1);
    j.close();
    const read = readJournal(file);
    expect([...read.submissions.keys()]).toContain(40);
    // The configurations survive the segments that first recorded them.
    expect(read.webhooks).toBe(hooks);
    // Reopened, the journal knows what is open, and keeps its bound.
    const again = new IntakeJournal(file, { segmentBytes: 4096 });
    expect(again.openSubmissions).toBe(1);
    expect(again.holds(40)).toBe(true);
    again.committed({ commit: 42, accepted: [], ended: [40] });
    expect(journalFiles(file).length).toBe(1);
    again.close();
  });

  it('writes nothing at open, and deletes itself when an append fails (no journal with a hole), then stays silent', () => {
    const file = fresh();
    const j = new IntakeJournal(file);
    j.committed({ commit: 1, accepted: [[1, 1, contacts(1, 2)]], ended: [] });
    j.close();
    const [first] = journalFiles(file);
    const again = new IntakeJournal(file);
    expect(journalFiles(file)).toEqual([first]);
    // The next segment cannot be made (a directory in its place): the append fails.
    mkdirSync(`${file}.intake-000002`);
    again.committed({ commit: 2, accepted: [[2, 1, contacts(2, 2)]], ended: [] });
    expect(again.abandoned).toBe(true);
    // Why, for the server to say (ServerStorage.journalLost, logged once as intake-journal-lost).
    expect(again.abandonedBecause).toMatch(/EISDIR|directory/i);
    expect(existsSync(first!)).toBe(false);
    expect(again.openSubmissions).toBe(0);
    again.committed({ commit: 3, accepted: [[3, 1, contacts(3, 2)]], ended: [] });
    rmSync(`${file}.intake-000002`, { recursive: true });
    expect(journalFiles(file)).toEqual([]);
    again.close();
  });

  it('reconciles with the database at load: records the live submissions it lacks, forgets those that ended', () => {
    const file = fresh();
    const j = new IntakeJournal(file);
    j.committed({
      commit: 1,
      accepted: [
        [1, 1, contacts(1, 2)],
        [2, 1, contacts(2, 2)],
      ],
      ended: [],
    });
    // Submission 2 ended without its end recorded; 3 is in the database only (an older store).
    j.reconcile(5, [
      [1, 1, () => contacts(1, 2), '30'],
      [3, 2, () => contacts(3, 4), '0040'],
    ]);
    expect(j.holds(2)).toBe(false);
    expect(j.holds(3)).toBe(true);
    j.close();
    const read = readJournal(file);
    expect(read.submissions.get(3)).toMatchObject({ commit: 5, campaignId: 2 });
    expect(read.ended.get(2)).toBe(5);
    // The contacts the database holds final are recorded final.
    expect([...read.finals].map(([seq, set]) => [seq, [...set]])).toEqual([
      [1, [0]],
      [3, [2]],
    ]);
  });

  it('names what a database lost: submissions of commits past it, rows it lacks, not those ended, and not contacts reported sent', () => {
    const file = fresh();
    const j = new IntakeJournal(file);
    for (let c = 1; c <= 6; c++) j.committed({ commit: c, accepted: [[c, 9, contacts(c, 3)]], ended: c === 4 ? [1] : c === 6 ? [5] : [] });
    // Submission 6's first contact sent and its third failed (notified then), each recorded once.
    j.committed({ commit: 7, accepted: [], ended: [], states: [[6, '320']] });
    j.committed({ commit: 8, accepted: [], ended: [], states: [[6, '324']] });
    j.close();
    expect([...readJournal(file).finals.get(6)!]).toEqual([0, 2]);
    const read = readJournal(file);
    // The database holds commits 1 to 3: 2 live, 3 lost from a damaged file (a row left out), one contact of it sent.
    const loss = journalLoss(read, { commit: 3, live: new Set([1, 2]), finished: new Set(), reported: new Set(['1:3001']) });
    expect(loss.lost.map((s) => [s.seq, s.lostIn, s.contacts.map((c) => (c as { id: number }).id)])).toEqual([
      [3, 'row', [3000, 3002]],
      [4, 'commit', [4000, 4001, 4002]],
      [6, 'commit', [6001]],
    ]);
    // Submission 5 was accepted and ended in lost commits: its outcome went out then; not reported again.
    expect(loss.endedUnknown).toBe(1);
  });
});
