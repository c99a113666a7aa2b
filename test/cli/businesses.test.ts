import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, sendpool } from './helpers.js';

describe('sendpool businesses', () => {
  it("prints the spec's GET /messenger/businesses/ response for examples/fleet.json (golden)", () => {
    const r = sendpool('businesses', 'examples/fleet.json');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(readFileSync(join(FIXTURES, 'businesses.golden.json'), 'utf8'));
  });

  it('has exactly the spec 2.1 / 2.2 keys', () => {
    const body = JSON.parse(sendpool('businesses', 'examples/fleet.json', '--compact').stdout) as Record<string, unknown>[];
    for (const b of body) {
      expect(Object.keys(b)).toEqual(['id', 'name', 'template_types']);
      for (const t of b['template_types'] as Record<string, unknown>[]) expect(Object.keys(t)).toEqual(['id', 'name', 'output', 'data', 'example', 'variables']);
    }
  });

  it('prints what GET /messenger/businesses/ answers (both come from engine.businesses())', () => {
    const body = JSON.parse(sendpool('businesses', 'examples/fleet.json', '--compact').stdout) as { template_types: Record<string, unknown>[] }[];
    expect(body[0]!.template_types[0]).toMatchObject({ data: 'Hi {{1}}, your bill of {{2}} is due.', example: 'Hi Ana, your bill of R$ 10,00 is due.' });
  });
});

describe('sendpool --help', () => {
  it.each(['businesses', 'forecast', 'simulate', 'serve'])('%s --help prints its usage and exits 0', (command) => {
    const r = sendpool(command, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: sendpool ${command}`));
  });

  it('sendpool --help lists every command', () => {
    const r = sendpool('--help');
    expect(r.code).toBe(0);
    for (const c of ['businesses', 'forecast', 'simulate', 'serve']) expect(r.stdout).toContain(c);
  });
});
