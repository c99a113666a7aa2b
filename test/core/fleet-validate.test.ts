import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetValidationError, ManualClock, createEngine, isFleetValidationError, validateFleet } from '../../src/index.js';
import { fleetArb, specFleet } from './arbitraries.js';

type Json = Record<string, any>;
const clone = (): Json => structuredClone(specFleet());

function problemsOf(fleet: unknown) {
  const result = validateFleet(fleet);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
}

describe('validateFleet', () => {
  it('accepts the example fleet and fills defaults', () => {
    const f = clone();
    delete f.businesses[0].numbers[0].status;
    const result = validateFleet(f);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.fleet.businesses[0]!.numbers[0]!.status).toBe('active');
      expect(result.fleet.templates[0]!.placeholders).toBe(2);
    }
  });

  const cases: [string, (f: Json) => void, string, string][] = [
    ['duplicate business id', (f) => f.businesses.push({ ...f.businesses[0], numbers: [], templateTypes: [] }), '$.businesses[1].id', '1 (number)'],
    ['duplicate phone', (f) => (f.businesses[0].numbers[2].phone = f.businesses[0].numbers[0].phone), '$.businesses[0].numbers[2].phone', '"5511990000001" (string)'],
    ['negative rate', (f) => (f.businesses[0].numbers[1].throughputPerHour = -5), '$.businesses[0].numbers[1].throughputPerHour', '-5 (number)'],
    ['non-integer rate', (f) => (f.businesses[0].numbers[1].throughputPerHour = 2.5), '$.businesses[0].numbers[1].throughputPerHour', '2.5 (number)'],
    ['non-integer limit', (f) => (f.businesses[0].numbers[0].messagingLimit24h = 10.5), '$.businesses[0].numbers[0].messagingLimit24h', '10.5 (number)'],
    ['negative per-second rate', (f) => (f.businesses[0].numbers[0].messagesPerSecond = -1), '$.businesses[0].numbers[0].messagesPerSecond', '-1 (number)'],
    ['unknown template id in a type', (f) => f.businesses[0].templateTypes[0].templateIds.push(999), '$.businesses[0].templateTypes[0].templateIds[2]', '999 (number)'],
    [
      'type linking a template of another business',
      (f) => {
        f.businesses.push({ id: 2, name: 'Other', numbers: [], templateTypes: [] });
        f.templates[1].businessIds = [2];
      },
      '$.businesses[0].templateTypes[0].templateIds[1]',
      '101 (number)',
    ],
    ['unknown number status', (f) => (f.businesses[0].numbers[0].status = 'pasued'), '$.businesses[0].numbers[0].status', '"pasued" (string)'],
    ['unknown template status', (f) => (f.templates[0].status = 'archived'), '$.templates[0].status', '"archived" (string)'],
    ['duplicate template id', (f) => (f.templates[1].id = 100), '$.templates[1].id', '100 (number)'],
    ['bad phone', (f) => (f.businesses[0].numbers[0].phone = '+55 11 99'), '$.businesses[0].numbers[0].phone', '"+55 11 99" (string)'],
    ['template of an unknown business', (f) => (f.templates[0].businessIds = [1, 7]), '$.templates[0].businessIds[1]', '7 (number)'],
    ['unknown field', (f) => (f.businesses[0].numbers[0].throughputperhour = 5), '$.businesses[0].numbers[0].throughputperhour', '5 (number)'],
    ['missing field', (f) => delete f.businesses[0].numbers[0].messagingLimit24h, '$.businesses[0].numbers[0].messagingLimit24h', 'missing'],
    ['gap in placeholders', (f) => (f.templates[0].text = 'Hi {{1}} {{3}}'), '$.templates[0].text', '"Hi {{1}} {{3}}" (string)'],
    ['named placeholder', (f) => (f.templates[0].text = 'Hi {{first_name}}'), '$.templates[0].text', '"Hi {{first_name}}" (string)'],
    ['empty placeholder', (f) => (f.templates[1].text = '{{1}}, {{2}} is due {{}}'), '$.templates[1].text', '"{{1}}, {{2}} is due {{}}" (string)'],
    ['spaced placeholder', (f) => (f.templates[0].text = 'Hi {{ 1 }}, {{2}}'), '$.templates[0].text', '"Hi {{ 1 }}, {{2}}" (string)'],
    ['placeholder zero', (f) => (f.templates[0].text = 'Hi {{0}}'), '$.templates[0].text', '"Hi {{0}}" (string)'],
    ['templates of a type taking different values', (f) => (f.templates[1].text = 'Only {{1}}'), '$.businesses[0].templateTypes[0].templateIds[1]', '101 (number)'],
    ['pause end without a pause', (f) => (f.businesses[0].numbers[0].pausedUntil = 5), '$.businesses[0].numbers[0].pausedUntil', '5 (number)'],
    ['empty example', (f) => (f.templates[0].example = ''), '$.templates[0].example', '"" (string)'],
    ['example keeping a placeholder', (f) => (f.templates[0].example = 'Hi {{1}}, R$ 10 is due.'), '$.templates[0].example', '"Hi {{1}}, R$ 10 is due." (string)'],
    ['variable index past the placeholders', (f) => (f.templates[0].variables = [{ name: 'customer', index: 2 }]), '$.templates[0].variables[0].index', '2 (number)'],
    [
      'a variable for a text without placeholders',
      (f) => {
        f.businesses[0].templateTypes.push({ id: 20, name: 'news', templateIds: [200] });
        f.templates.push({ id: 200, name: 'news', text: 'No placeholders here.', businessIds: [1], variables: [{ name: 'x', index: 0 }] });
      },
      '$.templates[2].variables[0].index',
      '0 (number)',
    ],
    [
      'two names for one placeholder',
      (f) =>
        (f.templates[0].variables = [
          { name: 'customer', index: 0 },
          { name: 'amount', index: 1 },
          { name: 'name', index: 0 },
        ]),
      '$.templates[0].variables[2].index',
      '0 (number)',
    ],
  ];

  it.each(cases)('reports %s at its path with the value', (_name, corrupt, path, actual) => {
    const f = clone();
    corrupt(f);
    const problems = problemsOf(f);
    const hit = problems.find((p) => p.path === path);
    expect(hit, JSON.stringify(problems)).toBeDefined();
    expect(hit!.actual).toBe(actual);
    expect(hit!.message).toContain(path);
    expect(hit!.message).toContain('expected');
  });

  it('says what a template example and variables must be', () => {
    const f = clone();
    f.templates[0].example = 'Hi {{1}}, R$ 10 is due.';
    f.templates[0].variables = [
      { name: 'customer', index: 0 },
      { name: 'name', index: 0 },
    ];
    const problems = problemsOf(f);
    expect(problems.find((p) => p.path === '$.templates[0].example')?.expected).toBe('a non-empty string: the text with sample values in place of its {{k}} placeholders');
    expect(problems.find((p) => p.path === '$.templates[0].variables[1].index')?.expected).toBe('an index not named before (first at $.templates[0].variables[0].index)');
    expect(problems).toHaveLength(2);

    const none = clone();
    none.templates[0].text = 'Hi there.';
    none.templates[1].text = 'Hello.';
    none.templates[0].variables = [{ name: 'x', index: 0 }];
    expect(problemsOf(none)).toEqual([expect.objectContaining({ path: '$.templates[0].variables[0].index', expected: 'no variables entry: the text has no placeholders' })]);
    none.templates[0].text = 'Hi {{1}}';
    none.templates[1].text = '{{1}}!';
    none.templates[0].variables = [{ name: 'x', index: 1 }];
    expect(problemsOf(none)).toEqual([expect.objectContaining({ path: '$.templates[0].variables[0].index', expected: 'a zero-based placeholder index from 0 to 0' })]);
  });

  it.each([
    ['Hi {{first_name}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{first_name}}" at character 3)'],
    ['{{x}} and {{1}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{x}}" at character 0)'],
    ['Hi {{01}}', 'placeholders numbered from {{1}} to {{100}}, written without leading zeros (found "{{01}}" at character 3)'],
    ['Hi {{1}}}', '"}}" only as the end of a placeholder {{1}}..{{100}} (found "Hi {{1}}}" at character 7)'],
  ])('refuses the template text %j with the offending piece in the expectation', (text, expected) => {
    const f = clone();
    f.templates[0].text = text;
    const hit = problemsOf(f).find((p) => p.path === '$.templates[0].text');
    expect(hit).toEqual({
      path: '$.templates[0].text',
      expected,
      actual: `${JSON.stringify(text)} (string)`,
      message: `$.templates[0].text: expected ${expected}, got ${JSON.stringify(text)} (string)`,
    });
  });

  it('refuses a bad template text in createEngine and replaceFleet alike, changing nothing', () => {
    const f = clone();
    f.templates[0].text = 'Hi {{first_name}}, {{2}} is due';
    const thrown = caught(() => createEngine(f, { clock: new ManualClock(0) }));
    expect(thrown).toBeInstanceOf(FleetValidationError);
    expect((thrown as FleetValidationError).problems.map((p) => p.path)).toEqual(['$.templates[0].text']);

    const engine = createEngine(specFleet(), { clock: new ManualClock(0) });
    const before = JSON.stringify(engine.templates());
    expect(() => engine.replaceFleet(f)).toThrow(FleetValidationError);
    expect(JSON.stringify(engine.templates())).toBe(before);
  });

  it('never sends a text with braces: a fleet with a named placeholder cannot reach poll()', () => {
    const f = clone();
    f.templates[0].text = 'Hi {{first_name}}';
    f.templates[1].text = 'Hello {{first_name}}';
    expect(validateFleet(f).ok).toBe(false);
    // The same fleet with {{1}} sends the value in place of the placeholder.
    f.templates[0].text = 'Hi {{1}}';
    f.templates[1].text = 'Hello {{1}}';
    const engine = createEngine(f, { clock: new ManualClock(0) });
    engine.submit({ businessId: 1, typeId: 10, contacts: [{ phone: '5511988887777', variables: ['Ana'] }] });
    const sent = engine.poll();
    expect(sent.map((m) => m.text)).toEqual([expect.stringMatching(/^(Hi|Hello) Ana$/)]);
  });

  it('lists every problem at once, not only the first', () => {
    const f = clone();
    f.businesses[0].numbers[0].throughputPerHour = -1;
    f.businesses[0].numbers[1].status = 'gone';
    f.templates[0].status = 'nope';
    f.businesses[0].templateTypes[0].templateIds.push(555);
    const paths = problemsOf(f).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining(['$.businesses[0].numbers[0].throughputPerHour', '$.businesses[0].numbers[1].status', '$.templates[0].status', '$.businesses[0].templateTypes[0].templateIds[2]']),
    );
  });

  it('rejects a bad fleet whole in createEngine, with the problems on a typed error', () => {
    const f = clone();
    f.businesses[0].numbers[0].throughputPerHour = 0;
    const thrown = caught(() => createEngine(f, { clock: new ManualClock(0) }));
    expect(thrown).toBeInstanceOf(FleetValidationError);
    expect(isFleetValidationError(thrown)).toBe(true);
    expect((thrown as FleetValidationError).problems[0]!.path).toBe('$.businesses[0].numbers[0].throughputPerHour');
  });

  it('replaceFleet with problems changes nothing', () => {
    const clock = new ManualClock(0);
    const engine = createEngine(specFleet(), { clock });
    engine.assign(1, 10, 10);
    const before = JSON.stringify(engine.snapshot());
    const f = clone();
    f.businesses[0].numbers.push({ phone: '5511990000009', throughputPerHour: 5, messagingLimit24h: 5 });
    f.templates[0].status = 'bogus';
    expect(() => engine.replaceFleet(f)).toThrow(FleetValidationError);
    expect(JSON.stringify(engine.snapshot())).toBe(before);
    expect(engine.throughput(1, 10)).toBe(3000);
  });

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true, withMap: true }), (input) => {
        const result = validateFleet(input);
        if (!result.ok) expect(result.problems.length).toBeGreaterThan(0);
      }),
    );
  });

  it('accepts every generated valid fleet', () => {
    fc.assert(
      fc.property(fleetArb({ accounts: true, perSecond: true }), ({ fleet }) => {
        const result = validateFleet(fleet);
        expect(result.ok ? [] : result.problems).toEqual([]);
      }),
    );
  });

  it('reports a corrupted field of any generated fleet at its path', () => {
    fc.assert(
      fc.property(fleetArb(), fc.nat(), fc.constantFrom(-1, 0.5, 'x', null), ({ fleet }, pick, bad) => {
        const f = structuredClone(fleet) as Json;
        const numbers = f.businesses.flatMap((b: Json, bi: number) => b.numbers.map((_: unknown, ni: number) => [bi, ni]));
        const [bi, ni] = numbers[pick % numbers.length];
        f.businesses[bi].numbers[ni].throughputPerHour = bad;
        const problems = problemsOf(f);
        expect(problems.map((p) => p.path)).toContain(`$.businesses[${bi}].numbers[${ni}].throughputPerHour`);
      }),
    );
  });
});

/** What `fn` threw (undefined when it returned). */
function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('validateFleet: WhatsApp Cloud API ids', () => {
  const withIds = (): Json => {
    const f = clone();
    f.businesses[0].whatsapp = { wabaId: '102290129340398' };
    f.businesses[0].numbers.forEach((n: Json, i: number) => (n.whatsapp = { phoneNumberId: `10654035224292${i}` }));
    f.templates[0].whatsapp = { language: 'pt_BR' };
    f.templates[1].whatsapp = { name: 'billing_b_v2', language: 'en_US', id: '1689556908129832', wabaId: '102290129340399' };
    return f;
  };

  it('keeps the ids, fills the template name and the number WABA from the business', () => {
    const result = validateFleet(withIds());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [b] = result.fleet.businesses;
    expect(b!.whatsapp).toEqual({ wabaId: '102290129340398' });
    expect(b!.numbers[0]!.whatsapp).toEqual({ phoneNumberId: '106540352242920', wabaId: '102290129340398' });
    expect(result.fleet.templates[0]!.whatsapp).toEqual({ name: 'billing_a', language: 'pt_BR', id: undefined, wabaId: undefined });
    expect(result.fleet.templates[1]!.whatsapp).toEqual({ name: 'billing_b_v2', language: 'en_US', id: '1689556908129832', wabaId: '102290129340399' });
  });

  const cases: [string, (f: Json) => void, string, string, string][] = [
    [
      'phone-number id as a number',
      (f) => (f.businesses[0].numbers[0].whatsapp.phoneNumberId = 106540352242920),
      '$.businesses[0].numbers[0].whatsapp.phoneNumberId',
      '106540352242920 (number)',
      'a Graph API id: a string of 1 to 32 digits',
    ],
    ['missing phone-number id', (f) => (f.businesses[0].numbers[1].whatsapp = {}), '$.businesses[0].numbers[1].whatsapp.phoneNumberId', 'missing', 'a Graph API id: a string of 1 to 32 digits'],
    [
      'duplicate phone-number id',
      (f) => (f.businesses[0].numbers[2].whatsapp.phoneNumberId = '106540352242920'),
      '$.businesses[0].numbers[2].whatsapp.phoneNumberId',
      '"106540352242920" (string)',
      'a phone-number id not used before (first at $.businesses[0].numbers[0].whatsapp.phoneNumberId)',
    ],
    ['unknown key on a number', (f) => (f.businesses[0].numbers[0].whatsapp.token = 'x'), '$.businesses[0].numbers[0].whatsapp.token', '"x" (string)', 'no such field (known: phoneNumberId, wabaId)'],
    ['bad business WABA id', (f) => (f.businesses[0].whatsapp.wabaId = 'waba-1'), '$.businesses[0].whatsapp.wabaId', '"waba-1" (string)', 'a Graph API id: a string of 1 to 32 digits'],
    ['missing template language', (f) => delete f.templates[0].whatsapp.language, '$.templates[0].whatsapp.language', 'missing', 'a language and locale code such as "pt_BR", "en_US" or "es"'],
    [
      'bad template language',
      (f) => (f.templates[0].whatsapp.language = 'Portuguese'),
      '$.templates[0].whatsapp.language',
      '"Portuguese" (string)',
      'a language and locale code such as "pt_BR", "en_US" or "es"',
    ],
    [
      'template name with capitals',
      (f) => (f.templates[1].whatsapp.name = 'Billing B'),
      '$.templates[1].whatsapp.name',
      '"Billing B" (string)',
      'a template name of the platform: 1 to 512 lowercase letters, digits or underscores',
    ],
    [
      'fleet name that is no platform name, and none given',
      (f) => (f.templates[0].name = 'Billing A'),
      '$.templates[0].whatsapp.name',
      'missing',
      'a template name of the platform: 1 to 512 lowercase letters, digits or underscores (needed because the template\'s name "Billing A" is not one)',
    ],
    ['bad template id', (f) => (f.templates[1].whatsapp.id = 'abc'), '$.templates[1].whatsapp.id', '"abc" (string)', 'a Graph API id: a string of 1 to 32 digits'],
  ];

  it.each(cases)('reports %s at its path', (_name, corrupt, path, actual, expected) => {
    const f = withIds();
    corrupt(f);
    const problems = problemsOf(f);
    expect(problems).toContainEqual({ path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` });
  });

  it('lets the engine run a fleet with ids as before', () => {
    const engine = createEngine(withIds(), { clock: new ManualClock(0) });
    expect(engine.output(1, 10)).toBe(3000);
  });
});

describe('validateFleet: portfolios', () => {
  const withPortfolios = (): Json => {
    const f = clone();
    f.portfolios = [
      { id: '1029384756', messagingLimit24h: 2000 },
      { id: 'other', messagingLimit24h: 250, uniqueRecipients: false },
    ];
    f.businesses[0].portfolioId = '1029384756';
    f.businesses[0].numbers[2].portfolioId = 'other';
    return f;
  };

  it("fills uniqueRecipients and gives each number its own portfolio or its business's", () => {
    const result = validateFleet(withPortfolios());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.fleet.portfolios).toEqual([
      { id: '1029384756', messagingLimit24h: 2000, uniqueRecipients: true },
      { id: 'other', messagingLimit24h: 250, uniqueRecipients: false },
    ]);
    expect(result.fleet.businesses[0]!.numbers.map((n) => n.portfolioId)).toEqual(['1029384756', '1029384756', 'other']);
    // A fleet without portfolios has none, and numbers without one.
    const plain = validateFleet(clone());
    expect(plain.ok && plain.fleet.portfolios).toEqual([]);
    expect(plain.ok && plain.fleet.businesses[0]!.numbers[0]!.portfolioId).toBeUndefined();
  });

  const cases: [string, (f: Json) => void, string, string, string][] = [
    [
      'an unknown portfolio of a business',
      (f) => (f.businesses[0].portfolioId = 'nope'),
      '$.businesses[0].portfolioId',
      '"nope" (string)',
      'the id of a portfolio of the fleet (one of "1029384756", "other")',
    ],
    [
      'an unknown portfolio of a number',
      (f) => (f.businesses[0].numbers[1].portfolioId = 'nope'),
      '$.businesses[0].numbers[1].portfolioId',
      '"nope" (string)',
      'the id of a portfolio of the fleet (one of "1029384756", "other")',
    ],
    ['a portfolio named without portfolios', (f) => delete f.portfolios, '$.businesses[0].portfolioId', '"1029384756" (string)', 'the id of a portfolio of the fleet ($.portfolios lists none)'],
    ['a duplicate portfolio id', (f) => (f.portfolios[1].id = '1029384756'), '$.portfolios[1].id', '"1029384756" (string)', 'a portfolio id not used before (first at $.portfolios[0].id)'],
    ['a limit of 0', (f) => (f.portfolios[0].messagingLimit24h = 0), '$.portfolios[0].messagingLimit24h', '0 (number)', 'an integer from 1 to 1000000000000'],
    ['a limit as text', (f) => (f.portfolios[0].messagingLimit24h = '2000'), '$.portfolios[0].messagingLimit24h', '"2000" (string)', 'an integer from 1 to 1000000000000'],
    ['uniqueRecipients as text', (f) => (f.portfolios[1].uniqueRecipients = 'yes'), '$.portfolios[1].uniqueRecipients', '"yes" (string)', 'true or false'],
    ['an empty portfolio id', (f) => (f.portfolios[0].id = ''), '$.portfolios[0].id', '"" (string)', 'a non-empty string'],
    ['portfolios not an array', (f) => (f.portfolios = {}), '$.portfolios', 'an object', 'an array'],
  ];

  it.each(cases)('reports %s at its path', (_name, corrupt, path, actual, expected) => {
    const f = withPortfolios();
    corrupt(f);
    expect(problemsOf(f)).toContainEqual({ path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` });
  });

  it('reports portfolios that are not a list once, not again at every reference', () => {
    const f = withPortfolios();
    f.portfolios = {};
    expect(problemsOf(f).map((p) => p.path)).toEqual(['$.portfolios']);
  });
});
