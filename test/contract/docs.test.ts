/**
 * The code samples of the documentation against the built package (`npm test` builds it first), so
 * a sample cannot drift from the API again: docs/contract.md once imported the parsers from
 * `sendpool`, which does not export them.
 *
 * - Every `import … from 'sendpool…'` of README.md and docs/*.md names what that entry exports.
 * - docs/contract.md's parsing sample type-checks as written (strict, like the project), inside a
 *   request handler that declares the sample's free variables `body`, `engine` and `requestId`.
 * - docs/contract.md's describeTemplate sample returns the value its comment shows.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { typecheckSample } from '../setup/typecheck-sample.js';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The code blocks of a Markdown text (fences may be indented, as in lists), with their language. */
function codeBlocks(markdown: string): { lang: string; code: string }[] {
  const blocks: { lang: string; code: string }[] = [];
  for (const m of markdown.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```/gm)) {
    const indent = m[1]!.length;
    blocks.push({
      lang: m[2]!,
      code: m[3]!
        .split('\n')
        .map((line) => line.slice(indent))
        .join('\n'),
    });
  }
  return blocks;
}

/** `import { a, type B } from 'sendpool/x'` and `import type { C } from 'sendpool'` of a sample. */
function sendpoolImports(code: string): { spec: string; name: string; typeOnly: boolean; line: string }[] {
  const out: { spec: string; name: string; typeOnly: boolean; line: string }[] = [];
  for (const m of code.matchAll(/^import (type )?\{([^}]*)\} from '(sendpool(?:\/[\w-]+)?)';?$/gm)) {
    for (const raw of m[2]!.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const typeOnly = m[1] !== undefined || item.startsWith('type ');
      const name = item
        .replace(/^type /, '')
        .split(/\s+as\s+/)[0]!
        .trim();
      out.push({ spec: m[3]!, name, typeOnly, line: m[0] });
    }
  }
  return out;
}

const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const samples = docs.flatMap((file) =>
  codeBlocks(read(file))
    .filter((b) => /^(ts|js|mjs|typescript)$/.test(b.lang))
    .map((b) => ({ file, code: b.code })),
);
const contractSamples = codeBlocks(read('docs/contract.md')).filter((b) => b.lang === 'ts');

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'contract.d.ts'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) first');
});

describe('documentation samples', () => {
  const imports = samples.flatMap((s) => sendpoolImports(s.code).map((i) => ({ ...i, file: s.file })));

  it('are found, with their sendpool imports (so the check below is not vacuous)', () => {
    expect(imports.map((i) => `${i.file}: ${i.spec}`)).toEqual(expect.arrayContaining(['docs/contract.md: sendpool/contract', 'README.md: sendpool']));
  });

  it('import every name from an entry that exports it', async () => {
    const wrong: string[] = [];
    for (const i of imports) {
      const entry = i.spec === 'sendpool' ? 'index' : i.spec.slice('sendpool/'.length);
      if (i.typeOnly) {
        // Types exist only in the declarations: tsup lists every export in one `export { … }`.
        const dts = read(`dist/${entry}.d.ts`);
        const listed = [...dts.matchAll(/^export \{([^}]*)\}/gm)].some((m) =>
          m[1]!.split(',').some(
            (e) =>
              e
                .trim()
                .replace(/^type /, '')
                .split(/\s+as\s+/)
                .pop() === i.name,
          ),
        );
        if (!listed) wrong.push(`${i.file}: type ${i.name} is not exported by '${i.spec}' (${i.line})`);
      } else {
        const module = (await import(i.spec)) as Record<string, unknown>;
        if (module[i.name] === undefined) wrong.push(`${i.file}: ${i.name} is not exported by '${i.spec}' (${i.line})`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('docs/contract.md samples', () => {
  it('the parsing sample type-checks against the built package', () => {
    const sample = contractSamples.find((b) => b.code.includes('parseSendRequest('));
    expect(sample, 'the parsing sample').toBeDefined();
    const lines = sample!.code.split('\n');
    const importLines = lines.filter((l) => l.startsWith('import '));
    const body = lines.filter((l) => !l.startsWith('import '));
    // The sample is the inside of a request handler: its imports go on top, the rest in the handler.
    const source = [
      ...importLines,
      "import type { Engine } from 'sendpool';",
      'declare const body: unknown;',
      'declare const engine: Engine;',
      'declare const requestId: string;',
      'export function handle() {',
      ...body.map((l) => `  ${l}`),
      '}',
      '',
    ].join('\n');
    const fileName = join(root, 'test', 'contract', '__contract-sample__.ts');
    const problems = typecheckSample(source, fileName, { noUnusedLocals: true });
    expect(problems, source).toEqual([]);
  });

  it('the describeTemplate sample returns what its comment shows', async () => {
    const sample = contractSamples.find((b) => b.code.includes('describeTemplate('));
    expect(sample, 'the describeTemplate sample').toBeDefined();
    const code = sample!.code
      .split('\n')
      .filter((l) => !l.startsWith('//'))
      .join('\n')
      .trim();
    const shown = sample!.code
      .split('\n')
      .filter((l) => l.startsWith('//'))
      .map((l) => l.slice(2))
      .join('\n');
    const contract = (await import('sendpool/contract')) as Record<string, unknown>;
    // The call is an expression over the entry's exports; the comment is an object literal.
    // Evaluating the documentation's own sample is the test (the text is this repository's).
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const run = new Function(...Object.keys(contract), `return (${code});`) as (...values: unknown[]) => unknown;
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const expected: unknown = new Function(`return (${shown});`)();
    expect(run(...Object.values(contract))).toEqual(expected);
  });
});
