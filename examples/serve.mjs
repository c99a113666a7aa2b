// `npm start`: the reference server on 127.0.0.1:3000 with examples/fleet.json, durable state in
// ./sendpool-data (SQLite; SENDPOOL_DATA_DIR moves it) and the simulated channel. The demo key below
// is for local use only: never deploy it.
import { fileURLToPath } from 'node:url';
import { runServer } from 'sendpool/server';

const DEMO_API_KEY = 'sendpool-demo-key-local-only';
const fleetFile = fileURLToPath(new URL('./fleet.json', import.meta.url));
const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.SENDPOOL_DATA_DIR ?? 'sendpool-data';

const { address } = await runServer({
  fleetFile,
  port,
  host: '127.0.0.1',
  apiKeys: [{ key: DEMO_API_KEY, companyId: 1, label: 'demo (local only)' }],
  dataDir, // what is answered 202 survives a crash; a restart resumes from it
  allowPrivateWebhookTargets: true, // webhook receivers on localhost, for trying things out
  logger: { level: process.env.LOG_LEVEL ?? 'warn' },
});

console.log(`sendpool server listening on ${address} (state kept in ${dataDir})`);
console.log(`demo API key (local use only): ${DEMO_API_KEY}`);
console.log(`try: curl -s -H 'x-api-key-id: ${DEMO_API_KEY}' ${address}/messenger/businesses/`);
console.log(`dashboard: ${address}/dashboard/ (type the demo key)`);
console.log('docs: docs/server.md; Ctrl-C stops it (intake stops, in-flight work finishes).');
