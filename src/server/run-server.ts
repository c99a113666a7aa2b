/**
 * `runServer`: what `sendpool serve` and `npm start` call. Reads the fleet, the keys and the
 * snapshot file (if any), builds the engine and the server, listens, and closes gracefully on
 * SIGINT/SIGTERM (stop intake, drain, snapshot).
 */
import { readFileSync } from 'node:fs';
import { peerError } from '../runtime/peers.js';
import { optionConflict, ServerOptionsError } from './ports/errors.js';
import { buildServer } from './build-server.js';
import type { SendpoolServer } from './server-control.js';
import type { Channel } from './ports/channel.js';
import { smppServerChannel } from './channels/smpp-server.js';
import type { WhatsAppChannelOptions } from './channels/whatsapp/options.js';
import { openLocalState, type InstanceState } from './instance-state.js';
import { startOnRedis } from './redis-instance.js';
import type { RunningServer, RunServerOptions } from './run-options.js';
import { loadApiKeys } from './tenants.js';

export type { RunServerOptions, RunningServer } from './run-options.js';

export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  const { fleetFile, port = 3000, host = '127.0.0.1', keysFile, snapshotFile, dataDir, recover = false, env = process.env, handleSignals = true, whatsapp, smpp, redis, ...rest } = options;
  refuseStateConflict(options);
  const fleet: unknown = JSON.parse(readFileSync(fleetFile, 'utf8'));
  // Declared before the parts that log to it: the channels' warnings and the Redis parts' events
  // (they may come while Redis starts) go to the server's log once it exists.
  let server: SendpoolServer | undefined;
  const templates: Channel | undefined = rest.channel ?? (whatsapp ? await whatsAppChannel(fleet, whatsapp, (message, details) => server?.log.warn(details, message)) : undefined);
  const keys = [...loadApiKeys({ ...(keysFile === undefined ? {} : { file: keysFile }), env }), ...(options.apiKeys ?? [])];
  // SMS over SMPP: composed with the template channel (its connection events go to the server's log).
  const channel = smpp === undefined ? templates : (await smppServerChannel(smpp, templates, () => server?.log)).channel;
  const state: InstanceState = redis === undefined ? await openLocalState(fleet, { dataDir, snapshotFile, recover }) : await startOnRedis(redis, rest, { host, port }, fleet, () => server);
  try {
    server = buildServer({ ...rest, ...(channel === undefined ? {} : { channel }), engine: state.engine, apiKeys: keys, ...state.serverOptions });
  } catch (e) {
    // Bad options: nothing listens, and what the state opened must not stay open.
    await state.abandon();
    await channel?.close?.();
    throw e;
  }
  const running: SendpoolServer = server;
  await running.listen({ port: await state.takePort(port), host });
  return {
    server: running,
    address: addressOf(running, host, port),
    metricsAddress: running.sendpool.metricsAddress(),
    restored: state.restored,
    ...(state.recovery ? { recovery: state.recovery } : {}),
    close: closing(running, state, handleSignals),
  };
}

/** `redis` keeps the state in Redis: a `dataDir` or `snapshotFile` beside it is a conflict. */
function refuseStateConflict({ redis, dataDir, snapshotFile }: RunServerOptions): void {
  if (redis !== undefined && (dataDir !== undefined || snapshotFile !== undefined)) {
    throw new ServerOptionsError([
      optionConflict('redis', 'no `dataDir` or `snapshotFile` beside it (`redis` keeps the state in Redis)', dataDir !== undefined ? '`dataDir` given' : '`snapshotFile` given'),
    ]);
  }
}

/** `http://host:port` of the server's listener (`[host]` for IPv6). */
function addressOf(running: SendpoolServer, host: string, port: number): string {
  const addr = running.server.address();
  const actualPort = typeof addr === 'object' && addr !== null ? addr.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
}

/**
 * The running server's `close`, once however often it is called, and on SIGINT/SIGTERM when
 * `handleSignals`. The state is let go after the server's last write (its onClose hook writes the
 * drained results).
 */
function closing(running: SendpoolServer, state: InstanceState, handleSignals: boolean): () => Promise<void> {
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= running.close().then(() => state.close()));
  if (handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      running.log.info({ signal }, 'shutting down');
      void close().then(() => process.exit(0));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  return close;
}

/** The WhatsApp channel, loaded only when asked for: its optional package (undici) stays off the default path. */
async function whatsAppChannel(fleet: unknown, options: Omit<WhatsAppChannelOptions, 'fleet'>, onWarning: NonNullable<WhatsAppChannelOptions['onWarning']>): Promise<Channel> {
  let mod: typeof import('./channels/whatsapp/index.js');
  try {
    mod = await import('./channels/whatsapp/index.js');
  } catch (e) {
    throw peerError(e, 'undici', 'The WhatsApp channel');
  }
  return mod.createWhatsAppChannel({ onWarning, ...options, fleet });
}
