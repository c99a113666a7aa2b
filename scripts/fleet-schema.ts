/**
 * Writes docs/fleet.schema.json, the JSON Schema of a fleet file, from `FleetSchema`:
 * `npm run fleet-schema`. A test (test/contract/fleet-schema.test.ts) fails when the checked-in
 * file is out of date. The package ships it (`sendpool/fleet.schema.json`).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderFleetSchema } from './fleet-schema-render.js';

const root = fileURLToPath(new URL('..', import.meta.url));
writeFileSync(`${root}docs/fleet.schema.json`, renderFleetSchema());
console.log('wrote docs/fleet.schema.json');
