/**
 * The codecs of the queue's Redis scripts (src/server/backends/redis/scripts/), without Redis: the named
 * sections read back what they wrote for any schema and values, refuse what does not fit, and the
 * scripts' Lua names only sections their schema declares; each script's call is what its header
 * says, and each reply is read into named results (another shape is a RedisScriptError).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRedisScriptError } from '../../src/server/backends/redis/scripts/errors.js';
import { composeLua, luaModule } from '../../src/server/backends/redis/scripts/lua.js';
import { encodeSections, luaSchema, readSections, records, sectionSchema, type SectionSchema } from '../../src/server/backends/redis/scripts/sections.js';
import { INSTANCES } from '../../src/server/backends/redis/scripts/instances.js';
import { QUEUE_EPOCH } from '../../src/server/backends/redis/scripts/queue-epoch.js';
import { REBUILD, REBUILD_SECTIONS } from '../../src/server/backends/redis/scripts/rebuild.js';
import { RECLAIM } from '../../src/server/backends/redis/scripts/reclaim.js';
import { RENEW_CHUNKS } from '../../src/server/backends/redis/scripts/renew-chunks.js';
import { RENEW_WORK } from '../../src/server/backends/redis/scripts/renew-work.js';
import { STEP, STEP_SECTIONS } from '../../src/server/backends/redis/scripts/step.js';
import { STILL_QUEUED } from '../../src/server/backends/redis/scripts/still-queued.js';
import { DEAD_LETTER_REPLAY } from '../../src/server/backends/redis/scripts/dead-letter-replay.js';
import { DEAD_LETTER_PRUNE } from '../../src/server/backends/redis/scripts/dead-letter-prune.js';
import { progressFields } from '../../src/server/backends/redis/queue.js';
import { sectionSchemas, sectionValues } from './script-sections-arbitrary.js';

/** What a script's Lua sees of one call: keys by index, every value a string. */
function keysOf(call: { keys: readonly string[]; argv: readonly (string | number)[] }) {
  const argv = call.argv.map(String);
  return { keys: call.keys, argv };
}

describe('named sections', () => {
  it('read back what they wrote, for any schema and values; each key is in KEYS once', () => {
    fc.assert(
      fc.property(
        sectionSchemas.chain((schema) => fc.tuple(fc.constant(schema), sectionValues(schema))),
        ([schema, values]) => {
          const call = encodeSections('any', schema, values);
          expect(readSections('any', schema, call)).toEqual(values);
          expect(new Set(call.keys).size).toBe(call.keys.length);
        },
      ),
    );
  });

  it("read back the step's and the rebuild's sections", () => {
    for (const schema of [STEP_SECTIONS, REBUILD_SECTIONS] as SectionSchema[]) {
      fc.assert(
        fc.property(sectionValues(schema), (values) => {
          expect(readSections('s', schema, encodeSections('s', schema, values))).toEqual(values);
        }),
        { numRuns: 50 },
      );
    }
  });

  it('are each a name, a length, then the values: lists and records say their count', () => {
    const schema = sectionSchema('t', { head: 'str', n: 'int', on: 'bool', k: 'key', list: 'strs', set: 'pairs', rows: records({ k: 'key', tags: 'strs' }) });
    const call = encodeSections('t', schema, {
      head: 'h',
      n: 7,
      on: true,
      k: '{t}a',
      list: ['x', 'y'],
      set: [['f', 'v']],
      rows: [
        { k: '{t}b', tags: [] },
        { k: '{t}a', tags: ['z'] },
      ],
    });
    expect(call.keys).toEqual(['{t}a', '{t}b']);
    expect(call.argv).toEqual(['head', '1', 'h', 'n', '1', '7', 'on', '1', '1', 'k', '1', '1', 'list', '3', '2', 'x', 'y', 'set', '3', '1', 'f', 'v', 'rows', '6', '2', '2', '0', '1', '1', 'z']);
  });

  it('refuse values that do not fit their kind, naming the script and the field', () => {
    const schema = sectionSchema('t', { n: 'int', rows: records({ at: 'int', name: 'str' }) });
    const refused = (values: unknown) => {
      try {
        encodeSections('t', schema, values as never);
      } catch (e) {
        return isRedisScriptError(e) ? e.message : `not a RedisScriptError: ${String(e)}`;
      }
      return 'encoded';
    };
    expect(refused({ n: Number.NaN, rows: [] })).toMatch(/^Redis script t: n: expected int/);
    expect(refused({ n: 1, rows: [{ at: 1, name: 2 }] })).toMatch(/rows\[0\]\.name: expected str/);
    expect(refused({ n: 1, rows: {} })).toMatch(/rows: expected a list of records/);
    expect(refused({ n: 1, rows: [] })).toBe('encoded');
  });

  it('refuse names that cannot be written into Lua', () => {
    expect(() => sectionSchema('t', { 'a-b': 'str' })).toThrow(/section or field name "a-b"/);
    expect(() => sectionSchema('t', { rows: records({ "x'": 'str' }) })).toThrow(/field name/);
  });

  it('are refused when read out of order, cut short or with values left over', () => {
    const schema = sectionSchema('t', { a: 'str', b: 'strs' });
    const call = encodeSections('t', schema, { a: 'x', b: ['y', 'z'] });
    const read = (argv: readonly (string | number)[]) => () => readSections('t', schema, { keys: call.keys, argv });
    expect(read([...call.argv.slice(3), ...call.argv.slice(0, 3)])).toThrow(/expected section a/);
    expect(read(call.argv.slice(0, -1))).toThrow(/found the end/);
    expect(read([...call.argv, 'extra'])).toThrow(/values after the last section/);
    expect(read(call.argv.map((v, i) => (i === 4 ? '2' : v)))).toThrow(/section b: 3 values read, 2 said/);
  });

  it('are written into Lua as the schema, in order', () => {
    expect(luaSchema({ a: 'str', rows: records({ k: 'key', set: 'pairs' }) })).toBe("{ { 'a', 'str' }, { 'rows', { { 'k', 'key' }, { 'set', 'pairs' } } } }");
  });

  it("the step's and the rebuild's Lua name only sections of their schema, and use every one", () => {
    for (const [s, schema] of [
      [STEP, STEP_SECTIONS],
      [REBUILD, REBUILD_SECTIONS],
    ] as const) {
      const body = s.script.source.slice(s.script.source.indexOf('local A, AT = sections_read'));
      const named = new Set([...body.matchAll(/\bAT?\.([A-Za-z0-9]+)/g)].map((m) => m[1]));
      expect([...named].sort()).toEqual(Object.keys(schema).sort());
    }
  });
});

describe('Lua composition', () => {
  it('includes each module once, after the modules it needs, then the body', () => {
    const base = luaModule('base', 'local function base() end');
    const left = luaModule('left', 'local function left() base() end', [base]);
    const right = luaModule('right', 'local function right() base() end', [base]);
    expect(composeLua([right, left, base], 'return 1')).toBe(
      ['-- module: base', 'local function base() end', '', '-- module: right', 'local function right() base() end', '', '-- module: left', 'local function left() base() end', '', 'return 1', ''].join(
        '\n',
      ),
    );
  });
});

describe('script calls as their headers say', () => {
  it('renewals: the stream (and the epoch marker), then group, consumer, idle time (and epoch id), then the ids', () => {
    expect(keysOf(RENEW_WORK.encode({ stream: 's', group: 'g', consumer: 'c', idleMs: 0, entryIds: ['1-0', '2-0'] }))).toEqual({ keys: ['s'], argv: ['g', 'c', '0', '1-0', '2-0'] });
    expect(keysOf(RENEW_CHUNKS.encode({ stream: 's', epochKey: 'e', group: 'g', consumer: 'c', idleMs: 30, epochId: 'id', entryIds: ['1-0'] }))).toEqual({
      keys: ['s', 'e'],
      argv: ['g', 'c', '30', 'id', '1-0'],
    });
  });

  it('the check of accepted chunks: the marker then each entry’s stream, the epoch id then the entry ids', () => {
    const call = STILL_QUEUED.encode({
      epochKey: 'e',
      epochId: 'id',
      entries: [
        { stream: 's1', entryId: '1-0' },
        { stream: 's1', entryId: '2-0' },
      ],
    });
    expect(keysOf(call)).toEqual({ keys: ['e', 's1', 's1'], argv: ['id', '1-0', '2-0'] });
  });

  it('reclaim, the epoch, the instances and the dead letters', () => {
    expect(keysOf(RECLAIM.encode({ streams: ['a', 'b'], group: 'g', consumer: 'c', leaseMs: 5, max: 9 }))).toEqual({ keys: ['a', 'b'], argv: ['g', 'c', '5', '9', ''] });
    expect(keysOf(QUEUE_EPOCH.encode({ key: 'e', candidate: 'x' }))).toEqual({ keys: ['e'], argv: ['x'] });
    expect(keysOf(INSTANCES.encode({ key: 'i', consumer: 'c', leaseMs: 5, stop: true }))).toEqual({ keys: ['i'], argv: ['c', '5', '1'] });
    const replay = (which: { one: string } | { family: string | null }, companyId: number | null = 3) =>
      keysOf(DEAD_LETTER_REPLAY.encode({ outbox: 'o', outboxGroup: 'g', byTime: 't', companyId, which })).argv;
    expect(replay({ one: 'ev' })).toEqual(['g', '3', 'one', 'ev']);
    expect(replay({ family: null }, null)).toEqual(['g', '', 'all', '']);
    expect(replay({ family: 'hsm' })).toEqual(['g', '3', 'all', 'hsm']);
    expect(keysOf(DEAD_LETTER_PRUNE.encode({ byTime: 't', oldest: 12 }))).toEqual({ keys: ['t'], argv: ['12'] });
  });
});

describe('replies read into named results', () => {
  it('the step: applied, repeated or voided', () => {
    expect(STEP.decode(['applied', ['1-0'], []])).toEqual({ outcome: 'applied', ids: ['1-0'], lost: [] });
    expect(STEP.decode(['repeated'])).toEqual({ outcome: 'repeated' });
    expect(STEP.decode(['voided', ['r1']])).toEqual({ outcome: 'voided', requests: ['r1'] });
  });

  it('another shape is a RedisScriptError naming the script and the part', () => {
    const error = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return isRedisScriptError(e) ? e.message : 'other';
      }
      return 'none';
    };
    expect(error(() => STEP.decode(['done', [], []]))).toBe('Redis script step: outcome: expected a reply of the script, got the string "done"');
    expect(error(() => STEP.decode([['1-0'], []]))).toBe('Redis script step: outcome: expected a string, got a list of 1');
    expect(error(() => STEP.decode(['applied', ['1-0', 7], []]))).toBe('Redis script step: chunk entry ids[1]: expected a string, got number 7');
    expect(error(() => RECLAIM.decode([['s', '1-0', '{}']]))).toBe('Redis script reclaim: entries[0]: expected 4 values, got a list of 3');
    expect(error(() => RECLAIM.decode([['s', '1-0', '{}', ['h1']]]))).toMatch(/entries\[0\]\.progress: expected field and value pairs/);
    expect(error(() => INSTANCES.decode('3'))).toBe('Redis script instances: instances: expected an integer, got the string "3"');
  });

  it('reclaimed entries with their progress; rebuilt ids (null: written by another); the epoch; entries still queued', () => {
    expect(RECLAIM.decode([['s', '1-0', '{"a":1}', ['h0', '2', 'f1', 'sent']]])).toEqual([
      {
        stream: 's',
        entryId: '1-0',
        body: '{"a":1}',
        progress: [
          ['h0', '2'],
          ['f1', 'sent'],
        ],
      },
    ]);
    expect(REBUILD.decode(['3-0', ''])).toEqual(['3-0', null]);
    expect(QUEUE_EPOCH.decode(['id', 1])).toEqual({ id: 'id', created: true });
    expect(STILL_QUEUED.decode([1, 0])).toEqual([true, false]);
  });

  it("a chunk's progress as hash fields: hand-outs, attempts ended, finals", () => {
    const progress = { handouts: new Map([[0, 2]]), ended: new Map([[0, 1]]), finals: new Map([[3, 'sent']]) };
    expect(progressFields(progress)).toEqual([
      ['h0', '2'],
      ['e0', '1'],
      ['f3', 'sent'],
    ]);
  });
});
