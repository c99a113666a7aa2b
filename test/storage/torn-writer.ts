/**
 * Child process of the torn-write test: opens the database in SENDPOOL_TORN_DIR and writes steps as
 * fast as it can, each a submission of 200 contacts and a server value, printing each step's number
 * after its write returned (so it is durable) until it is killed.
 */
import { openSqliteStorage } from '../../src/server/backends/sqlite/open-storage.js';

const dir = process.env['SENDPOOL_TORN_DIR']!;
const storage = await openSqliteStorage(dir);
const contacts = Array.from({ length: 200 }, (_, i) => ({ phone: `55119${String(10000000 + i)}`, variables: ['x'.repeat(40)], data: { k: 'v'.repeat(30) } }));
for (let step = 1; ; step++) {
  storage.write({
    engine: {
      takenAt: step,
      nextSeq: step + 1,
      counts: { submitted: step * 200, queued: step * 200, waitingRetry: 0, inFlight: 0, sent: 0, failed: 0, expired: 0, rejected: 0 },
      submissions: [
        {
          seq: step,
          businessId: 1,
          typeId: 10,
          maxRetries: 0,
          retryInterval: 0,
          weight: 1,
          contacts,
          state: '0'.repeat(200),
          retries: new Array(200).fill(0),
          handouts: new Array(200).fill(0),
          fresh: 0,
          back: [],
          timers: [],
        },
      ],
      finished: [],
      numbers: [],
      templates: [],
      store: { kind: 'memory', bucketMinutes: 60 },
    },
    values: { lastStep: step },
  });
  process.stdout.write(`${step}\n`);
}
