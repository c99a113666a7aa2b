/**
 * Writes test/contract/spec-tables.json from ../shared/spec/service.md (or the path given):
 * `npx tsx scripts/spec-tables.ts [path/to/service.md]`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { extractSpecTables } from '../test/contract/spec-tables.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const spec = process.argv[2] ?? `${root}../shared/spec/service.md`;
writeFileSync(`${root}test/contract/spec-tables.json`, `${JSON.stringify(extractSpecTables(readFileSync(spec, 'utf8')), null, 2)}\n`);
console.log('wrote test/contract/spec-tables.json');
