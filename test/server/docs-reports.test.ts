/**
 * docs/server.md's sample that registers report generators (section "Licenses and tickets") against
 * the built package (`npm test` builds it first): it type-checks as written (strict, like the
 * project) with its free variables declared, and it runs: the server it builds answers both
 * reports over HTTP with the files its generators write.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { typecheckSample } from '../setup/typecheck-sample.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { testFleet, waitFor } from './helpers.js';

const root = resolve(import.meta.dirname, '../..');
const doc = readFileSync(join(root, 'docs/server.md'), 'utf8');
const sample = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes('reportGenerators: {'));

/** What the sample uses without defining: the host's systems, the fleet and the keys. */
const FREE = `
declare const billing: { planOf(companyId: number): Promise<{ name: string; seats: number; used: number }> };
declare const helpdesk: { tickets(companyId: number, start: number, end: number): Promise<{ open: boolean }[]> };
declare const fleet: unknown;
declare const apiKeys: { key: string; companyId: number }[];
`;

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'server.d.ts'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
});

describe('docs/server.md report generators sample', () => {
  it('is found', () => {
    expect(sample).toBeDefined();
  });

  it('type-checks against the built package', () => {
    const source = `${sample!}\n${FREE}\nexport { server };\n`;
    const fileName = join(root, 'test', 'server', '__reports-sample__.ts');
    const problems = typecheckSample(source, fileName);
    expect(problems, source).toEqual([]);
  });

  it("runs: the server it builds answers both reports with the generators' files", async () => {
    const { createEngine } = await import('sendpool');
    const serverEntry = await import('sendpool/server');
    // The sample's imports become parameters; its types go (transpiled), and it hands back its server.
    const body = sample!
      .split('\n')
      .filter((l) => !l.startsWith('import '))
      .join('\n');
    const js = ts.transpileModule(`${body}\nreturn server;`, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.None } }).outputText;
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the documentation's example as written
    const run = new Function('createEngine', 'buildServer', 'billing', 'helpdesk', 'fleet', 'apiKeys', js) as (...args: unknown[]) => ReturnType<typeof serverEntry.buildServer>;
    const asked: unknown[] = [];
    const billing = { planOf: async (companyId: number) => ({ name: `plan-of-${companyId}`, seats: 10, used: 7 }) };
    const helpdesk = {
      tickets: async (companyId: number, start: number, end: number) => {
        asked.push([companyId, start, end]);
        return [{ open: true }, { open: false }, { open: false }];
      },
    };
    const key = 'docs-sample-key-0000000001';
    const quiet = (o: Parameters<typeof serverEntry.buildServer>[0]) => serverEntry.buildServer({ ...o, logger: false, processMetrics: false });
    const server = run(createEngine, quiet, billing, helpdesk, testFleet(), [{ key, companyId: 1 }]);
    try {
      const files: Record<string, string> = {};
      for (const report_type of ['licenses', 'tickets-summary']) {
        const body = report_type === 'tickets-summary' ? { report_type, start_date: '2025-01-01', end_date: '2025-01-31' } : { report_type };
        const created = await server.inject({ method: 'POST', url: '/reports/', headers: { 'x-api-key-id': key }, payload: body });
        expect(created.statusCode).toBe(202);
        const id = created.json().report_id;
        let shown: any;
        await waitFor(async () => {
          shown = (await server.inject({ url: `/reports/${id}/`, headers: { 'x-api-key-id': key } })).json();
          return shown.status !== 'processing';
        }, `report ${report_type}`);
        expect(shown.status).toBe('ready');
        const download = await server.inject({ url: new URL(shown.file_url).pathname + new URL(shown.file_url).search, headers: { 'x-api-key-id': key } });
        expect(download.statusCode).toBe(200);
        files[report_type] = download.body;
      }
      expect(files).toEqual({ licenses: 'plan,seats,seats_used\nplan-of-1,10,7\n', 'tickets-summary': 'tickets,open,closed\n3,1,2\n' });
      expect(asked).toEqual([[1, Date.parse('2025-01-01T00:00:00-03:00'), Date.parse('2025-02-01T00:00:00-03:00')]]);
    } finally {
      await server.close();
    }
  });
});
