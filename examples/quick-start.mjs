// sendpool quick start: build an engine from a fleet, read output per template type, assign
// messages, pause a number, read output again. `npm start` runs this file.
import { readFileSync } from 'node:fs';
import { createEngine, ManualClock } from 'sendpool';

const fleet = JSON.parse(readFileSync(new URL('./fleet.json', import.meta.url), 'utf8'));
const clock = new ManualClock(0); // milliseconds; omit it to use the system clock
const engine = createEngine(fleet, { clock });

console.log('businesses:', JSON.stringify(engine.businesses()));
console.log('throughput of Acme/billing:', engine.throughput(1, 10), 'messages/hour');

const { assignments } = engine.assign(1, 10, 4);
for (const a of assignments) console.log('  send via', a.phone, 'template', a.templateId);

engine.setNumberStatus('5511990000002', 'paused'); // the platform paused a number
console.log('after pausing 5511990000002: output', engine.output(1, 10), 'throughput', engine.throughput(1, 10));

const burst = engine.assign(1, 10, 5000);
console.log('asked 5000, got', burst.assignments.length, '->', burst.reason, 'until t =', burst.retryAt, 'ms');
