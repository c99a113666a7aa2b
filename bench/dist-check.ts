/** The benches that load sendpool from dist/ measure the build: it must be there and newer than src/. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Fails (naming `bench`) when dist/ is missing or older than a source file. */
export function checkBuild(bench: string): void {
  const built = join(ROOT, 'dist/server.js');
  if (!existsSync(built)) throw new Error(`${bench} bench: dist/ is missing; run \`npx tsup --silent\` first`);
  const builtAt = statSync(built).mtimeMs;
  const walk = (dir: string): string | undefined => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        const found = walk(p);
        if (found !== undefined) return found;
      } else if (statSync(p).mtimeMs > builtAt) return p;
    }
    return undefined;
  };
  const newer = walk(join(ROOT, 'src'));
  if (newer !== undefined) throw new Error(`${bench} bench: ${newer} is newer than dist/; run \`npx tsup --silent\` first`);
}
