/** Every input error: one message naming the file (or flag), the JSON path and the value; exit 2; nothing written. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch, sendpool } from './helpers.js';

const dir = scratch({
  'bad-fleet.json': {
    businesses: [{ id: 1, name: 'A', numbers: [{ phone: '12', throughputPerHour: -5, messagingLimit24h: 10 }], templateTypes: [] }],
    templates: [],
  },
  'named-placeholder.json': {
    businesses: [{ id: 1, name: 'A', numbers: [{ phone: '5511990000001', throughputPerHour: 100, messagingLimit24h: 1000 }], templateTypes: [{ id: 10, name: 'hello', templateIds: [100] }] }],
    templates: [{ id: 100, name: 'hello', text: 'Hi {{first_name}}', businessIds: [1] }],
  },
  'broken.json': '{\n  "businesses": [\n    { "id": 1,, }\n',
  'bad-events.json': [{ at: '30x', pauseNumber: '5511990000001' }, { at: '1h', pauseNumber: '999' }, { at: '2h' }, { at: '1h', setLimit: { phone: '5511990000002', messagingLimit24h: 0 } }],
  'not-a-list.json': { pauseNumber: '5511990000001' },
});
const fleet = 'examples/fleet.json';
const pool = ['-b', '1', '-t', '10', '-n', '1000'];

function expectUsageError(args: string[], ...parts: (string | RegExp)[]): void {
  const chart = join(dir, `chart-${Math.random().toString(36).slice(2)}.svg`);
  const r = sendpool(...args, ...(args[0] === 'simulate' && !args.includes('--chart') ? ['--chart', chart] : []));
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  for (const part of parts) expect(r.stderr).toMatch(part);
  expect(r.stderr.trim().length).toBeGreaterThan(0);
  expect(existsSync(chart)).toBe(false);
}

describe('input errors exit 2 with one message', () => {
  it('a fleet with problems: every problem with the file, its JSON path and the value', () => {
    const file = join(dir, 'bad-fleet.json');
    expectUsageError(
      ['forecast', file, ...pool],
      `${file}: 2 problems`,
      `${file}: $.businesses[0].numbers[0].throughputPerHour: expected an integer from 1 to 1000000000, got -5 (number)`,
      '$.businesses[0].numbers[0].phone',
      '"12"',
    );
  });

  it('a fleet template with a named placeholder: the path, the expectation and the text', () => {
    const file = join(dir, 'named-placeholder.json');
    expectUsageError(
      ['businesses', file],
      `${file}: $.templates[0].text: expected nothing but placeholders {{1}}..{{100}} between double braces (found "{{first_name}}" at character 3), got "Hi {{first_name}}" (string)`,
    );
  });

  it('a fleet that is not JSON: the file, line and column', () => {
    const file = join(dir, 'broken.json');
    expectUsageError(['simulate', file, ...pool], `${file}: $: expected JSON, got a syntax error at line 3 column`);
  });

  it('a fleet file that does not exist', () => {
    expectUsageError(['businesses', join(dir, 'missing.json')], 'missing.json: cannot read: no such file');
  });

  it('an unknown business: the file, the path of the ids and the value', () => {
    expectUsageError(['forecast', fleet, '-b', '9', '-t', '10', '-n', '5'], `--business 9: ${fleet}: $.businesses[*].id: expected the id of a business of the fleet (1, 2), got 9`);
  });

  it('an unknown template type of the business', () => {
    expectUsageError(['simulate', fleet, '-b', '1', '-t', '30', '-n', '5'], `--type 30: ${fleet}: $.businesses[0].templateTypes[*].id: expected a template type of business 1 (10, 20), got 30`);
  });

  it.each([
    [['forecast', fleet, '-b', '1', '-t', '10', '-n', 'abc'], '--messages: expected a whole number from 1 to 1,000,000,000,000, got "abc"'],
    [['forecast', fleet, '-b', '1', '-t', '10', '-n', '0'], '--messages: expected a whole number'],
    [['simulate', fleet, '-b', 'one', '-t', '10', '-n', '5'], '--business: expected a positive integer id, got "one"'],
    [['forecast', fleet, ...pool, '--bogus'], 'unknown flag --bogus'],
    [['forecast', fleet, '-b', '1', '-t', '10'], 'missing --messages N'],
    [['forecast', '-b', '1', '-t', '10', '-n', '5'], 'missing FLEET'],
    [['simulate', fleet, ...pool, '--horizon', '3x'], '--horizon: expected a duration such as 45s, 30m, 2h, 1h30m, 1d or 250ms, got "3x"'],
    [['simulate', fleet, ...pool, '--chart', 'out.png'], '--chart: expected a file name ending in .svg, got "out.png"'],
    [['simulate', fleet, ...pool, '--pause-number', '5511990000001@soon'], '--pause-number "5511990000001@soon": WHEN: expected a duration', '"soon"'],
    [['simulate', fleet, ...pool, '--pause-number', '5511990000001'], '--pause-number "5511990000001": expected PHONE@WHEN'],
    [['simulate', fleet, ...pool, '--disable-template', '999@1h'], '--disable-template "999@1h": TEMPLATE_ID: expected the id of a template of the fleet', 'got 999 (number)'],
  ] as [string[], ...string[]][])('bad flag: %j', (args, ...parts) => {
    expectUsageError(args, ...parts);
  });

  it('an events file with problems: all of them, each with its JSON path and value, before anything runs', () => {
    const file = join(dir, 'bad-events.json');
    expectUsageError(
      ['simulate', fleet, ...pool, '--events', file],
      `${file}: 4 problems`,
      `${file}: $[0].at: expected a duration`,
      '"30x"',
      `${file}: $[1].pauseNumber: expected the phone of a number of the fleet`,
      `${file}: $[2]: expected exactly one action of pauseNumber, resumeNumber, pauseTemplate, disableTemplate, resumeTemplate, setLimit, got none`,
      `${file}: $[3].setLimit.messagingLimit24h: expected an integer from 1 to 1000000000000, got 0 (number)`,
    );
  });

  it('an events file that is not a list', () => {
    const file = join(dir, 'not-a-list.json');
    expectUsageError(['forecast', fleet, ...pool, '--events', file], `${file}: $: expected an array of events`);
  });

  it('an unknown command', () => {
    const r = sendpool('frobnicate');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  it('serve needs a FLEET', () => {
    const r = sendpool('serve');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/missing FLEET/);
  });

  it('serve takes --memory or --data-dir, not both', () => {
    const r = sendpool('serve', 'examples/fleet.json', '--memory', '--data-dir', 'somewhere');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--memory and --data-dir: give one or the other');
  });
});
