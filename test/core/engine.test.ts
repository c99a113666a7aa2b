import { describe, expect, it } from 'vitest';
import { ManualClock, MemoryStore, type SnapshotError, createEngine, isArgumentError, isNotFoundError, isSnapshotError, type FleetDescription } from '../../src/index.js';
import { specFleet } from './arbitraries.js';

const [A, B, C] = ['5511990000001', '5511990000002', '5511990000003'];
const HOUR = 3_600_000;

function setup(fleet: FleetDescription = specFleet()) {
  const clock = new ManualClock(0);
  return { clock, engine: createEngine(fleet, { clock }) };
}

describe('a business’s capacity (engine.capacity)', () => {
  it('counts a number serving two template types once, and only while it is eligible in some pool', () => {
    const fleet = specFleet();
    const acme = fleet.businesses[0]!;
    const twoTypes: FleetDescription = {
      ...fleet,
      businesses: [{ ...acme, templateTypes: [...acme.templateTypes, { id: 20, name: 'welcome', templateIds: [102] }] }],
      templates: [...fleet.templates, { id: 102, name: 'welcome', text: 'Welcome, {{1}}!', businessIds: [1], status: 'active' }],
    };
    const { engine } = setup(twoTypes);
    // Each pool counts all three numbers: summing the pools would say 6,000/h.
    expect(engine.throughput(1, 10) + engine.throughput(1, 20)).toBe(6000);
    expect(engine.capacity(1)).toEqual({ output: 3000, throughputPerHour: 3000 });
    engine.setNumberStatus(B, 'paused');
    expect(engine.capacity(1)).toEqual({ output: 2000, throughputPerHour: 2000 });
    // Out of one pool (its template paused), still in the other: counted once.
    engine.setTemplateStatus(102, 'paused');
    expect(engine.capacity(1)).toEqual({ output: 2000, throughputPerHour: 2000 });
    engine.setTemplateStatus(100, 'paused');
    engine.setTemplateStatus(101, 'paused');
    expect(engine.capacity(1)).toEqual({ output: 0, throughputPerHour: 0 });
    expect(() => engine.capacity(9)).toThrow(/business/);
  });
});

describe('the spec illustration (1.6)', () => {
  it('three numbers of 1,000/h give 3,000; one paused gives 2,000; resumed, 3,000 again', () => {
    const { engine } = setup();
    expect(engine.throughput(1, 10)).toBe(3000);
    expect(engine.output(1, 10)).toBe(3000);
    engine.setNumberStatus(B, 'paused');
    expect(engine.throughput(1, 10)).toBe(2000);
    expect(engine.output(1, 10)).toBe(2000);
    engine.setNumberStatus(B, 'active');
    expect(engine.throughput(1, 10)).toBe(3000);
    expect(engine.output(1, 10)).toBe(3000);
  });

  it('answers GET /messenger/businesses/ in exactly the spec shape', () => {
    const { engine } = setup();
    const billing = {
      id: 10,
      name: 'billing',
      output: 3000,
      data: 'Hi {{1}}, your bill of {{2}} is due.',
      example: 'Hi [{{1}}], your bill of [{{2}}] is due.',
      variables: [
        [
          { name: '{{1}}', index: 0 },
          { name: '{{2}}', index: 1 },
        ],
        [
          { name: '{{1}}', index: 0 },
          { name: '{{2}}', index: 1 },
        ],
      ],
    };
    expect(engine.businesses()).toEqual([{ id: 1, name: 'Acme', template_types: [billing] }]);
    expect(Object.keys(engine.businesses()[0]!.template_types[0]!)).toEqual(['id', 'name', 'output', 'data', 'example', 'variables']);
  });
});

describe('data, example and variables of a template type (spec 2.2)', () => {
  const named = (): FleetDescription => {
    const fleet = specFleet();
    return {
      ...fleet,
      templates: [
        {
          ...fleet.templates[0]!,
          variables: [
            { name: 'amount', index: 1 },
            { name: 'customer', index: 0 },
          ],
          example: 'Hi Ana, your bill of R$ 10 is due.',
        },
        { ...fleet.templates[1]!, variables: [{ name: 'name', index: 0 }] },
      ],
    };
  };
  const billing = (engine: ReturnType<typeof setup>['engine']) => engine.businesses()[0]!.template_types[0]!;

  it("takes names and the example from the fleet, and [name] for a template's missing example", () => {
    const { engine } = setup(named());
    expect(billing(engine)).toMatchObject({
      data: 'Hi {{1}}, your bill of {{2}} is due.',
      example: 'Hi Ana, your bill of R$ 10 is due.',
      variables: [
        [
          { name: 'customer', index: 0 },
          { name: 'amount', index: 1 },
        ],
        [
          { name: 'name', index: 0 },
          { name: '{{2}}', index: 1 },
        ],
      ],
    });
  });

  it("describes the type's active templates; all of them when none is active; follows timed pauses", () => {
    const { engine, clock } = setup(named());
    engine.setTemplateStatus(100, 'paused', { until: 5000 });
    expect(billing(engine)).toMatchObject({ data: '{{1}}, {{2}} is due tomorrow.', example: '[name], [{{2}}] is due tomorrow.' });
    expect(billing(engine).variables).toHaveLength(1);

    engine.setTemplateStatus(101, 'disabled');
    expect(billing(engine)).toMatchObject({ data: 'Hi {{1}}, your bill of {{2}} is due.', example: 'Hi Ana, your bill of R$ 10 is due.' });
    expect(billing(engine).variables).toHaveLength(2);
    expect(billing(engine).output).toBe(0);

    clock.set(5000); // template 100's pause ends by the clock
    expect(billing(engine)).toMatchObject({ data: 'Hi {{1}}, your bill of {{2}} is due.', variables: [[{ name: 'customer' }, { name: 'amount' }]] });
  });

  it('a type without templates has none of the three; replaceFleet describes the new texts', () => {
    const fleet = specFleet();
    const { engine } = setup({ ...fleet, businesses: [{ ...fleet.businesses[0]!, templateTypes: [...fleet.businesses[0]!.templateTypes, { id: 20, name: 'empty', templateIds: [] }] }] });
    expect(engine.businesses()[0]!.template_types[1]).toEqual({ id: 20, name: 'empty', output: 0 });

    engine.replaceFleet({ ...fleet, templates: [{ ...fleet.templates[0]!, text: 'Now {{1}} owes {{2}}.' }, fleet.templates[1]!] });
    expect(billing(engine)).toMatchObject({ data: 'Now {{1}} owes {{2}}.', example: 'Now [{{1}}] owes [{{2}}].' });
  });
});

describe('assign', () => {
  it('rotates numbers and templates round-robin', () => {
    const { engine } = setup();
    const { assignments } = engine.assign(1, 10, 6);
    expect(assignments.map((a) => a.phone)).toEqual([A, B, C, A, B, C]);
    expect(assignments.map((a) => a.templateId)).toEqual([100, 101, 100, 101, 100, 101]);
    expect(engine.output(1, 10)).toBe(2994);
  });

  it('continues the rotation across calls', () => {
    const { engine } = setup();
    const phones = [1, 2, 3, 4, 5].flatMap(() => engine.assign(1, 10, 1).assignments.map((a) => a.phone));
    expect(phones).toEqual([A, B, C, A, B]);
  });

  it('skips a paused number without interruption and takes it back on resume', () => {
    const { engine } = setup();
    engine.assign(1, 10, 1); // A
    engine.setNumberStatus(B, 'paused');
    expect(engine.assign(1, 10, 4).assignments.map((a) => a.phone)).toEqual([C, A, C, A]);
    engine.setNumberStatus(B, 'active');
    expect(new Set(engine.assign(1, 10, 3).assignments.map((a) => a.phone))).toEqual(new Set([A, B, C]));
  });

  it('says no-capacity with the time more becomes available', () => {
    const { engine, clock } = setup();
    const result = engine.assign(1, 10, 3005);
    expect(result.assignments).toHaveLength(3000);
    expect(result.reason).toBe('no-capacity');
    expect(result.retryAt).toBe(3600);
    clock.set(3600);
    expect(engine.assign(1, 10, 5).assignments).toHaveLength(3);
  });

  it('says no-template when every template of the type is out, and output is 0', () => {
    const { engine, clock } = setup();
    engine.setTemplateStatus(100, 'disabled');
    expect(engine.assign(1, 10, 2).assignments.map((a) => a.templateId)).toEqual([101, 101]);
    engine.setTemplateStatus(101, 'paused', { until: 5000 });
    expect(engine.assign(1, 10, 1)).toEqual({ assignments: [], reason: 'no-template', retryAt: 5000 });
    expect(engine.output(1, 10)).toBe(0);
    expect(engine.throughput(1, 10)).toBe(0);
    clock.set(5000);
    expect(engine.assign(1, 10, 1).assignments).toEqual([{ phone: C, templateId: 101 }]);
    expect(engine.throughput(1, 10)).toBe(3000);
  });

  it('says no-number when every number is paused, with the earliest timed resume', () => {
    const { engine, clock } = setup();
    engine.setNumberStatus(A, 'paused', { until: 9000 });
    engine.setNumberStatus(B, 'paused', { until: 7000 });
    engine.setNumberStatus(C, 'paused');
    expect(engine.assign(1, 10, 1)).toEqual({ assignments: [], reason: 'no-number', retryAt: 7000 });
    expect(engine.nextResumeAt()).toBe(7000);
    clock.set(7000);
    expect(engine.assign(1, 10, 2).assignments.map((a) => a.phone)).toEqual([B, B]);
    expect(engine.throughput(1, 10)).toBe(1000);
  });

  it('a later status change cancels a timed resume', () => {
    const { engine, clock } = setup();
    engine.setNumberStatus(A, 'paused', { until: 1000 });
    engine.setNumberStatus(A, 'paused');
    clock.set(2000);
    expect(engine.throughput(1, 10)).toBe(2000);
  });

  it('sends a template with an account only from numbers of that account', () => {
    const fleet = specFleet() as any;
    fleet.businesses[0].numbers[0].account = 'x';
    fleet.businesses[0].numbers[1].account = 'y';
    fleet.templates[0].account = 'x';
    const { engine } = setup(fleet);
    const pairs = engine.assign(1, 10, 30).assignments;
    for (const p of pairs) if (p.templateId === 100) expect(p.phone).not.toBe(B);
    expect(pairs.filter((p) => p.phone === B).every((p) => p.templateId === 101)).toBe(true);
    engine.setTemplateStatus(101, 'disabled');
    // B can send nothing now: it leaves the pool.
    expect(engine.throughput(1, 10)).toBe(2000);
  });

  it('enforces the per-second window with the others', () => {
    const fleet = specFleet() as any;
    fleet.businesses[0].numbers = [{ phone: A, throughputPerHour: 100_000, messagingLimit24h: 1_000_000, messagesPerSecond: 80 }];
    const { engine, clock } = setup(fleet);
    expect(engine.output(1, 10)).toBe(80);
    const r = engine.assign(1, 10, 100);
    expect(r.assignments).toHaveLength(80);
    expect(r.retryAt).toBe(13); // 1000 ms / 80 = 12.5 ms per message, rounded up
    clock.set(1000);
    expect(engine.assign(1, 10, 100).assignments).toHaveLength(80);
  });

  it('fills typed arrays on the batch path exactly as assign would', () => {
    const a = setup().engine;
    const b = setup().engine;
    const numbers = new Int32Array(5000);
    const templates = new Float64Array(5000);
    const batch = b.assignInto(1, 10, 5000, numbers, templates);
    const single = a.assign(1, 10, 5000);
    expect(batch.count).toBe(single.assignments.length);
    expect(batch.reason).toBe(single.reason);
    expect(batch.retryAt).toBe(single.retryAt);
    for (let i = 0; i < batch.count; i++) {
      expect(b.phoneAt(numbers[i]!)).toBe(single.assignments[i]!.phone);
      expect(templates[i]).toBe(single.assignments[i]!.templateId);
    }
  });

  it('changes limits at run time, keeping what was sent', () => {
    const { engine } = setup();
    engine.assign(1, 10, 300); // 100 each
    engine.setNumberLimits(A, { throughputPerHour: 5000 });
    expect(engine.throughput(1, 10)).toBe(7000);
    expect(engine.output(1, 10)).toBe(4900 + 900 + 900);
    engine.setNumberLimits(A, { messagingLimit24h: 150 });
    expect(engine.output(1, 10)).toBe(50 + 900 + 900);
  });
});

describe('programmer errors', () => {
  const { engine } = setup();
  const cases: [string, () => unknown, (e: unknown) => boolean, string][] = [
    ['unknown business', () => engine.assign(9, 10, 1), isNotFoundError, 'business 9'],
    ['unknown type', () => engine.output(1, 99), isNotFoundError, 'template type 99'],
    ['unknown phone', () => engine.setNumberStatus('5500000000000', 'paused'), isNotFoundError, '5500000000000'],
    ['unknown template', () => engine.setTemplateStatus(7, 'paused'), isNotFoundError, 'template 7'],
    ['negative count', () => engine.assign(1, 10, -1), isArgumentError, '`assign(count)`'],
    ['fractional count', () => engine.assign(1, 10, 1.5), isArgumentError, '1.5 (number)'],
    ['bad status', () => engine.setNumberStatus(A, 'disabled' as 'paused'), isArgumentError, '"disabled" (string)'],
    ['until without a pause', () => engine.setTemplateStatus(100, 'disabled', { until: 5 }), isArgumentError, 'options.until'],
    ['bad limits', () => engine.setNumberLimits(A, { throughputPerHour: -3 }), (e) => e instanceof Error && e.name === 'FleetValidationError', '$.throughputPerHour'],
    ['arrays too short', () => engine.assignInto(1, 10, 10, new Int32Array(5), new Float64Array(10)), isArgumentError, 'at least count = 10'],
    ['clock going back', () => new ManualClock(10).set(5), isArgumentError, 'not before the current 10'],
  ];
  it.each(cases)('%s is a typed error naming the value', (_name, call, guard, text) => {
    let thrown: unknown;
    try {
      call();
    } catch (e) {
      thrown = e;
    }
    expect(guard(thrown)).toBe(true);
    expect(String((thrown as Error).message)).toContain(text);
  });
});

describe('snapshots', () => {
  it('a restarted engine remembers the last 24 hours and does not over-send', () => {
    const { engine, clock } = setup();
    engine.assign(1, 10, 3000);
    engine.setNumberStatus(C, 'paused', { until: 2 * HOUR });
    clock.set(HOUR / 2);
    const json = JSON.parse(JSON.stringify(engine.snapshot()));
    const restarted = createEngine(specFleet(), { clock, snapshot: json });
    expect(restarted.output(1, 10)).toBe(engine.output(1, 10));
    expect(restarted.throughput(1, 10)).toBe(2000);
    expect(restarted.assign(1, 10, 10_000).assignments).toHaveLength(1000); // 500 + 500 refilled
    clock.set(2 * HOUR);
    expect(restarted.throughput(1, 10)).toBe(3000);
  });

  it('keeps the rotation across a restart', () => {
    const { engine, clock } = setup();
    engine.assign(1, 10, 4); // A B C A
    const restarted = createEngine(specFleet(), { clock, snapshot: engine.snapshot() });
    expect(restarted.assign(1, 10, 2).assignments).toEqual(engine.assign(1, 10, 2).assignments);
  });

  it('refuses a snapshot from a newer sendpool and a malformed one, clearly', () => {
    const { engine, clock } = setup();
    const snap = { ...engine.snapshot(), version: 99 };
    expect(() => createEngine(specFleet(), { clock, snapshot: snap })).toThrow(/version 99 was written by a newer sendpool/);
    let thrown: unknown;
    try {
      createEngine(specFleet(), { clock, snapshot: { format: 'sendpool.engine', version: 1, numbers: 'x' } });
    } catch (e) {
      thrown = e;
    }
    expect(isSnapshotError(thrown)).toBe(true);
    expect((thrown as SnapshotError).problems.map((p) => p.path)).toEqual(expect.arrayContaining(['$.store', '$.numbers', '$.templates', '$.pools']));
  });

  it('replaceFleet keeps the usage of phones that stay', () => {
    const { engine } = setup();
    engine.assign(1, 10, 3000);
    const fleet = specFleet() as any;
    fleet.businesses[0].numbers.push({ phone: '5511990000004', throughputPerHour: 1000, messagingLimit24h: 10000 });
    engine.replaceFleet(fleet);
    expect(engine.throughput(1, 10)).toBe(4000);
    expect(engine.output(1, 10)).toBe(1000);
  });

  it('a shared store carries usage between engines', () => {
    const clock = new ManualClock(0);
    const store = new MemoryStore();
    const one = createEngine(specFleet(), { clock, store });
    const two = createEngine(specFleet(), { clock, store });
    one.assign(1, 10, 2000);
    expect(two.output(1, 10)).toBe(1000);
  });
});

describe('status listeners', () => {
  it('hear calls, failovers and timed resumes, with their source', () => {
    const { engine, clock } = setup();
    const heard: string[] = [];
    const off = engine.onStatusChange((c) => heard.push(`${c.kind === 'number' ? c.phone : c.templateId} ${c.status} ${c.source}${c.until !== undefined ? ` until ${c.until}` : ''}`));
    engine.setNumberStatus(A, 'paused', { until: 1000, source: 'remote' });
    engine.setTemplateStatus(100, 'disabled');
    engine.submit({ businessId: 1, typeId: 10, contacts: [{ phone: '5511987654321', variables: ['a', 'b'] }] });
    const [m] = engine.poll();
    engine.report(m!.messageId, { status: 'failed', code: 131048 });
    clock.set(1000);
    engine.output(1, 10);
    off();
    engine.setNumberStatus(C, 'paused');
    expect(heard).toEqual([`${A} paused remote until 1000`, '100 disabled api', `${B} paused failover until ${HOUR}`, `${A} active timer`]);
  });
});

describe('capacityChanged', () => {
  it('brings a parked number back at once, without waiting for the time the store gave', () => {
    // A store that grants nothing until told, the way a shared store waits for a lease.
    let open = false;
    const inner = new MemoryStore();
    const store = {
      open: (k: string, l: Parameters<MemoryStore['open']>[1], now: number) => inner.open(k, l, now),
      available: (h: number, now: number) => (open ? inner.available(h, now) : 0),
      reserve: (h: number, want: number, now: number) => (open ? inner.reserve(h, want, now) : 0),
      release: (h: number, n: number, now: number) => inner.release(h, n, now),
      availableAt: (_h: number, _n: number, now: number) => now + HOUR,
      snapshot: () => inner.snapshot(),
      restore: (s: ReturnType<MemoryStore['snapshot']>, now: number) => inner.restore(s, now),
    };
    const clock = new ManualClock(0);
    const engine = createEngine(specFleet(), { clock, store });
    expect(engine.assign(1, 10, 3)).toMatchObject({ assignments: [], reason: 'no-capacity', retryAt: HOUR });
    open = true;
    expect(engine.assign(1, 10, 3).assignments).toHaveLength(0); // still parked until HOUR
    engine.capacityChanged(A);
    expect(engine.assign(1, 10, 3).assignments.map((a) => a.phone)).toEqual([A, A, A]);
    engine.capacityChanged('5500000000000'); // unknown phones are ignored
  });
});
