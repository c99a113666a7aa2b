/** The dead-letter book: its bounds per company and by age, its order and pages, its changes for a durable step. */
import { describe, expect, it } from 'vitest';
import { DeadLetterBook, type DeadLetter } from '../../src/server/dead-letters.js';

const letter = (id: string, companyId: number, at: number, family: DeadLetter['event']['family'] = 'hsm'): DeadLetter => ({
  event: { id, family, url: 'https://hooks.example.com/x', body: '{}', companyId },
  createdAt: null,
  deadLetteredAt: at,
  attempts: 3,
  lastError: 'HTTP 500: broken',
});

describe('the dead-letter book', () => {
  it('keeps the newest per company, drops those past the age, and records each change in order', () => {
    const book = new DeadLetterBook({ maxPerCompany: 2, maxAgeMs: 1_000 }, true);
    book.add(letter('a', 1, 100), 100);
    book.add(letter('b', 1, 200, 'report'), 200);
    book.add(letter('c', 2, 300), 300);
    book.add(letter('d', 1, 400), 400); // company 1 holds two: a goes
    expect(book.rows().map((d) => d.event.id)).toEqual(['b', 'd', 'c']);
    expect(Object.fromEntries(book.counts())).toEqual({ hsm: 2, report: 1 });
    expect(book.takeChanges().map((c) => [c.id, c.row === null ? 'drop' : 'keep'])).toEqual([
      ['a', 'keep'],
      ['b', 'keep'],
      ['c', 'keep'],
      ['d', 'keep'],
      ['a', 'drop'],
    ]);
    // 1,250 ms: b (200) is past the age; a list drops it first.
    expect(book.list(null, { limit: 10 }, 1_250).items.map((d) => d.event.id)).toEqual(['d', 'c']);
    expect(book.takeChanges()).toEqual([{ id: 'b', companyId: 1, row: null }]);
    expect(book.size).toBe(2);
  });

  it('lists newest first in pages, by company and family, and takes what a replay takes', () => {
    const book = new DeadLetterBook();
    for (const [id, at] of [
      ['x1', 5],
      ['x3', 7],
      ['x2', 7],
      ['x4', 9],
    ] as const)
      book.add(letter(id, 1, at), 10);
    book.add(letter('r', 1, 8, 'report'), 10);
    book.add(letter('other', 2, 9), 10);
    const first = book.list(1, { limit: 2 }, 10);
    expect(first.items.map((d) => d.event.id)).toEqual(['x4', 'r']);
    const [at, id] = first.next!.split('_');
    const second = book.list(1, { limit: 2, before: { at: Number(at), id: id! } }, 10);
    expect(second.items.map((d) => d.event.id)).toEqual(['x3', 'x2']);
    expect(book.list(1, { limit: 10, family: 'report' }, 10).items.map((d) => d.event.id)).toEqual(['r']);
    expect(book.take(2, 'x1')).toBeUndefined();
    expect(book.take(1, 'x1')?.event.id).toBe('x1');
    // All of a family, in the order they were dead-lettered (not by time).
    expect(book.takeAll(null, 'hsm').map((d) => d.event.id)).toEqual(['x3', 'x2', 'x4', 'other']);
    expect(book.rows().map((d) => d.event.id)).toEqual(['r']);
  });
});
