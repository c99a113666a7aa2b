/** Regenerates test/events/spec-tables.json from ../shared/spec/service.md (or the path given). */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { extractSpecTables } from './spec-tables.js';

const specPath = process.argv[2] ?? fileURLToPath(new URL('../../../shared/spec/service.md', import.meta.url));
const out = fileURLToPath(new URL('./spec-tables.json', import.meta.url));
writeFileSync(out, `${JSON.stringify(extractSpecTables(readFileSync(specPath, 'utf8')), null, 2)}\n`);
console.log(`wrote ${out} from ${specPath}`);
