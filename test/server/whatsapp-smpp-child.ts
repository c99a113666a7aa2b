/**
 * Child process of the channel restart tests: the reference server on a durable store (runServer
 * with a data directory) sending through the real channels, the WhatsApp Cloud API channel against
 * the test's fake Graph API and/or the SMPP channel against the test's local SMSC. The test kills
 * it with SIGKILL and starts another on the same directory. Tells its address over IPC once
 * listening. It runs on the built package with plain node (test/server/built-child.ts), so it
 * imports nothing else of the tests: the fake Graph API's credentials come with its configuration.
 */
import { runServer, type RunServerOptions } from '../../src/server/index.js';

export interface ChildConfig {
  readonly fleetFile: string;
  readonly dataDir: string;
  readonly key: string;
  /** The fake Graph API's origin, and how soon an attendance closes. */
  readonly whatsapp?: { readonly graphUrl: string; readonly attendanceIdleMs: number };
  /** The local SMSC's port. */
  readonly smppPort?: number;
  /** The SMPP channel's `receiptTimeoutMs`. @default the channel's (48 hours) */
  readonly smppReceiptTimeoutMs?: number;
}

/** The fake Graph API's credentials (whatsapp-fake-graph.ts), added by startChild. */
export interface ChildCredentials {
  readonly accessToken: string;
  readonly appSecret: string;
  readonly verifyToken: string;
}

const cfg = JSON.parse(process.env['SENDPOOL_CHANNEL_CHILD']!) as ChildConfig & { readonly credentials: ChildCredentials };
const options: RunServerOptions = {
  fleetFile: cfg.fleetFile,
  port: 0,
  dataDir: cfg.dataDir,
  apiKeys: [{ key: cfg.key, companyId: 1 }],
  logger: { level: 'error' },
  handleSignals: false,
  metrics: false,
  allowPrivateWebhookTargets: true,
  campaignBatchIntervalMs: 100,
  outbox: { initialDelayMs: 20, maxDelayMs: 200, attemptTimeoutMs: 5_000 },
  ...(cfg.whatsapp ? { whatsapp: { ...cfg.credentials, graphUrl: cfg.whatsapp.graphUrl, attendanceIdleMs: cfg.whatsapp.attendanceIdleMs } } : {}),
  ...(cfg.smppPort !== undefined
    ? {
        smpp: {
          host: '127.0.0.1',
          port: cfg.smppPort,
          systemId: 'sendpool',
          password: 'secret1',
          sourceAddr: '5511300000000',
          ...(cfg.smppReceiptTimeoutMs !== undefined ? { receiptTimeoutMs: cfg.smppReceiptTimeoutMs } : {}),
        },
      }
    : {}),
};
const running = await runServer(options);
process.send?.({ address: running.address });
