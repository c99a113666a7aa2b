/**
 * Where the documentation is for someone who installed the package: the package ships `docs/`
 * beside `dist/` (the bin is `dist/cli.js`), so the help names that folder by its path on this
 * machine, which resolves wherever npm put the package.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The `docs/` folder of this copy of sendpool (from the build or, in a checkout, from `src/cli`). */
export function docsFolder(): string {
  for (const relative of ['../docs/', '../../docs/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}cli.md`)) return dir;
  }
  return 'docs/ in the sendpool package';
}
