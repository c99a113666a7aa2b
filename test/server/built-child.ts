/**
 * A child process script of the tests that start server processes (kills, restarts, several
 * instances), run on the built package (dist/) with plain `node` instead of `node --import tsx` on
 * the sources: tsx hooks every module the child loads, about 1.3 s of CPU per start, and these
 * tests start children tens of times. The child's TypeScript (type-checked with the tests) is
 * transpiled once per worker process (again once the test file whose temporary directory held it
 * has ended); its imports of the package's entries (`../../src/server/index.js`, …) become the
 * built entries. The build is the one `npm test` makes first (pretest, as the CLI tests'
 * dist/cli.js); a build older than the sources is refused rather than tested.
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { tempDir } from '../temp-dirs.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The package's entries as the sources name them, and their built files (tsup.config.ts). */
const ENTRIES: Record<string, string> = {
  'src/index.js': 'dist/index.js',
  'src/contract/index.js': 'dist/contract.js',
  'src/events/index.js': 'dist/events.js',
  'src/server/index.js': 'dist/server.js',
  'src/redis/index.js': 'dist/redis.js',
  'src/server/channels/whatsapp/index.js': 'dist/whatsapp.js',
};

/** The newest modification time of a file under `dir` (ms), and that file. */
function newest(dir: string): { at: number; file: string } {
  let best = { at: 0, file: dir };
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const at = statSync(file).mtimeMs;
    if (at > best.at) best = { at, file };
  }
  return best;
}

/** Scripts made, by source: test files share a worker's modules, so one is made once per worker. */
const made = new Map<string, string>();

/**
 * The path of a plain ES module that runs `source` (a `.ts` child script beside the tests) against
 * dist/. Throws when the child imports a source module that is not a package entry (dist has no
 * such file), or when dist/ is missing or older than src/ (run `npx tsup --silent`). Made once and
 * kept while its file lives (the temporary directories of a test file go at its end).
 */
export function builtChild(source: string): string {
  const known = made.get(source);
  if (known !== undefined && existsSync(known)) return known;
  const text = readFileSync(source, 'utf8');
  const dir = resolve(source, '..');
  let code = ts.transpileModule(text, {
    fileName: source,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, sourceMap: false },
  }).outputText;
  const built = new Set<string>();
  code = code.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\2/g, (_all, lead: string, quote: string, spec: string) => {
    const rel = resolve(dir, spec)
      .slice(ROOT.length + 1)
      .replaceAll('\\', '/');
    const target = ENTRIES[rel];
    if (target === undefined) throw new Error(`${basename(source)} imports ${spec}, which is not an entry of the package: a child run on dist/ may import only ${Object.keys(ENTRIES).join(', ')}`);
    built.add(target);
    return `${lead}${quote}${pathToFileURL(join(ROOT, target)).href}${quote}`;
  });
  const sources = newest(join(ROOT, 'src'));
  for (const target of built) {
    let at: number;
    try {
      at = statSync(join(ROOT, target)).mtimeMs;
    } catch {
      throw new Error(`${target} is missing: build first (npx tsup --silent; npm test does it)`);
    }
    if (at < sources.at) throw new Error(`${target} is older than ${sources.file.slice(ROOT.length + 1)}: build again (npx tsup --silent; npm test does it)`);
  }
  const out = join(tempDir('sendpool-child-'), `${basename(source, '.ts')}.mjs`);
  writeFileSync(out, code);
  made.set(source, out);
  return out;
}
