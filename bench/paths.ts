/**
 * Where the benchmarks run from: the bundle `npm run bench` builds into bench/.build and runs on
 * plain Node, as a host runs sendpool, or the TypeScript sources under tsx (`npx tsx bench/run.ts`,
 * and the smoke test). Child processes are started the same way as their parent.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/** Running from the bundle in bench/.build rather than from the TypeScript sources. */
export const BUNDLED = !here.endsWith('.ts');

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`bench: no package.json above ${from}`);
  }
}

/** The package's root directory. */
export const ROOT = packageRoot(dirname(here));

/** How to start bench entry `name` ('child', 'memory-main') in a child process. */
export function entry(name: string): { readonly nodeArgs: readonly string[]; readonly script: string } {
  return BUNDLED ? { nodeArgs: [], script: join(ROOT, 'bench', '.build', `${name}.js`) } : { nodeArgs: ['--import', 'tsx'], script: join(ROOT, 'bench', `${name}.ts`) };
}
