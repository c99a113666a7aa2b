/**
 * Writes docs/openapi.json from the contract schemas: `npm run openapi`. A test
 * (test/contract/openapi.test.ts) fails when the checked-in file is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderOpenApi } from './openapi-render.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const version = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version;
writeFileSync(`${root}docs/openapi.json`, renderOpenApi(version));
console.log('wrote docs/openapi.json');
