/**
 * The backend contract (backend-contract.ts) on the three backends: memory, sqlite (the embedded
 * database in a scratch directory) and redis (each Redis target the run has; skipped without).
 */
import { join } from 'node:path';
import { createEngine } from '../../src/engine.js';
import { openSqliteStorage } from '../../src/server/index.js';
import { cleanup, connect, describeTargets, testPrefix } from '../redis/helpers.js';
import { tempDir } from '../temp-dirs.js';
import { backendContract } from './backend-contract.js';
import { startServer, testFleet } from './helpers.js';

backendContract('memory', async () => {
  const started = await startServer();
  return { started, close: () => started.server.close() };
});

backendContract('sqlite', async () => {
  const storage = await openSqliteStorage(join(tempDir('sendpool-backend-'), 'data'));
  const started = await startServer({ engine: createEngine(testFleet(), { trackChanges: true }), storage });
  return {
    started,
    close: async () => {
      await started.server.close();
      storage.close();
    },
  };
});

describeTargets('backend contract on Redis', (target) => {
  const client = connect(target);
  const prefix = testPrefix('backend');
  backendContract(`redis [${target.name}]`, async () => {
    const started = await startServer({ redis: { client, prefix, prefetchContacts: 150 } });
    return {
      started,
      close: async () => {
        await started.server.close();
        await cleanup(client, prefix);
        client.disconnect();
      },
    };
  });
});
