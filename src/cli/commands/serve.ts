/**
 * `sendpool serve FLEET`: the reference server (src/server). Its entry (dist/server.js) is loaded at
 * run time, so the other commands never load fastify; the flags are handed to `runServer` and the
 * process serves until SIGINT/SIGTERM. When the server cannot load (the optional package fastify is
 * not installed; prom-client too, unless --no-metrics), the command says why and exits 2. The
 * server's own options and behaviour are documented with the server.
 */
import { fleetArgument, parse } from '../args.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from '../errors.js';
import { isMissingPeerError } from '../../runtime/peers.js';
import { loadFleet } from '../fleet-file.js';
import type { Io } from '../io.js';
import { SERVE_FLAGS, serveSettings } from '../serve-flags.js';
import { VERSION } from '../version.js';
import { recoverySummary, type StoreRecovery } from '../../storage/store-open.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool serve FLEET [options]

Runs the reference HTTP server of the service (sendpool/server) on the fleet description FLEET,
until SIGINT or SIGTERM. It needs the optional package fastify, and prom-client for GET /metrics.
Run Node with an 8 MB young generation (docs/server.md): NODE_OPTIONS=--max-semi-space-size=8.

Options:
      --port N                 port to listen on (default 3000)
      --host HOST              address to listen on (default 127.0.0.1)
      --keys FILE              API keys file; keys in SENDPOOL_API_KEYS are added
      --snapshot FILE          read at start when it exists, written on shutdown
      --data-dir DIR           where durable state is kept (SQLite; default ./sendpool-data):
                               what was answered 202 survives kill -9 (docs/server.md)
      --memory                 keep state in memory only (lost on a crash; for trying things out)
      --recover                start even if the store in --data-dir is damaged or incomplete
                               (its WAL cut or deleted, the database file emptied or damaged):
                               keep what is intact and report what was lost. Without it such a
                               store is refused at start, naming the file (docs/server.md)
      --redis URL              one of many instances on Redis: a shared queue, shared capacity
                               (docs/scaling.md); needs the optional package ioredis
      --state-dir DIR          with --redis: this instance's own directory for the epochs of Redis it
                               saw and the webhook configurations (a Redis that comes back empty
                               is noticed even when every instance restarted; docs/scaling.md)
      --public-base-url URL    origin of report download links, e.g. https://api.example.com
                               (default: the address the server listens on)
      --report-token-key-file FILE
                               key signing report download links (at least 32 bytes), so links
                               work on every instance and after the data directory is replaced
      --allow-private-webhook-targets
                               let webhooks and SMS callbacks target loopback and private
                               addresses. For local development only: never in production (SSRF)
      --metrics-port N         serve GET /metrics on this port only (the API port answers 404)
      --metrics-host HOST      address of the metrics port (default 127.0.0.1)
      --metrics-key-file FILE  scrapes must send Authorization: Bearer <the file's key>
      --no-metrics             serve no GET /metrics (prom-client is then not needed)
      --no-dashboard           serve no operator dashboard at /dashboard/
      --headers-timeout DURATION
                               a request's headers must arrive within it (default 10s)
      --request-timeout DURATION
                               a whole request must arrive within it (default 1m)
      --keep-alive-timeout DURATION
                               an idle keep-alive connection closes after it (default 5s;
                               behind a load balancer, set it above the balancer's idle timeout)
      --idle-timeout DURATION  a connection with no traffic either way closes after it (default 1m)
      --already-sent-window DURATION
                               a contact whose phone the business took for the template type
                               within it is refused as already_sent (default 24h; 0 turns it off)
      --channel NAME           simulated (default) or whatsapp: send through the WhatsApp Cloud
                               API and receive Meta's webhooks at /whatsapp/webhook (the fleet's
                               numbers and templates carry their WhatsApp ids; docs/channels.md)
      --whatsapp-credentials FILE
                               JSON { "accessToken", "appSecret", "verifyToken" }; without it (or
                               for what it leaves out) SENDPOOL_WHATSAPP_ACCESS_TOKEN,
                               SENDPOOL_WHATSAPP_APP_SECRET, SENDPOOL_WHATSAPP_VERIFY_TOKEN.
                               Never logged
      --graph-url URL          origin of the Graph API (default https://graph.facebook.com)
      --graph-api-version V    Graph API version of the sends (default v23.0)
      --max-in-flight-per-number N
                               most sends of one number at the platform at once (default 2000):
                               the ceiling of the window that follows the number's rate times the
                               platform's answer time (docs/channels.md, "Pacing")
      --sms-channel simulated|smpp
                               where SMS go (default simulated). smpp needs the optional package
                               smpp; its options come from --smpp-config and SENDPOOL_SMPP_*
                               variables (docs/channels.md, "SMPP")
      --smpp-config FILE       SMPP options (JSON: host, port, systemId, sourceAddr, window, …);
                               SENDPOOL_SMPP_PASSWORD keeps the password out of the file
      --version                print the version of sendpool and exit
  -h, --help                   this help

GET /metrics is open on the API port unless --metrics-key-file or --metrics-port is given
(docs/server.md, "Metrics"). Durations: 500ms, 10s, 2m, 1h.`;

type RunServer = (options: Record<string, unknown>) => Promise<{ readonly address: string; readonly metricsAddress?: string | null; readonly recovery?: StoreRecovery }>;

/** The server entry, loaded at run time from beside dist/cli.js so the CLI bundle does not carry it. */
async function loadRunServer(): Promise<{ readonly run: RunServer } | { readonly error: string }> {
  try {
    const mod = (await import(new URL('./server.js', import.meta.url).href)) as Record<string, unknown>;
    const run = mod['runServer'];
    return typeof run === 'function' ? { run: run as RunServer } : { error: 'the server entry has no runServer' };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    // The usual cause: the optional peer packages are not installed.
    const missing = /Cannot find (?:package|module) '(fastify)[^']*'/.exec(text)?.[1];
    return { error: missing ? `it needs the optional package ${missing}: npm install fastify (and prom-client for /metrics)` : text };
  }
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'the reference HTTP server on a fleet (when this build has it)',
  help: HELP,
  async run(argv: readonly string[], io: Io): Promise<number> {
    const args = parse('serve', argv, SERVE_FLAGS);
    if (args.values['help'] === true) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    if (args.values['version'] === true) {
      io.out(`${VERSION}\n`);
      return EXIT_OK;
    }
    const fleetFile = fleetArgument('serve', args.positionals);
    // Flags first: a bad one is reported whether or not the server's packages are installed.
    const { options, notes } = serveSettings(args.values, io);
    const loaded = await loadRunServer();
    if ('error' in loaded) {
      io.err(`sendpool serve: the reference server cannot start: ${loaded.error}\n`);
      return EXIT_USAGE;
    }
    loadFleet(io, fleetFile); // the same messages as the other commands for a bad fleet
    let running;
    try {
      running = await loaded.run({ fleetFile, ...options });
    } catch (e) {
      // Configuration the user must fix (keys, snapshot, address in use) is theirs: exit 2.
      if (isMissingPeerError(e) && e.peer === 'prom-client') throw new UsageError(`GET /metrics needs the optional package "prom-client": ${e.install}, or give --no-metrics`);
      throw new UsageError(e instanceof Error ? e.message : String(e));
    }
    for (const note of notes) io.err(`sendpool serve: note: ${note}\n`);
    if (running.recovery) io.err(`sendpool serve: ${recoverySummary(running.recovery)}\n`);
    const metrics = running.metricsAddress ? `, metrics on ${running.metricsAddress}/metrics` : '';
    const dataDir = options['dataDir'];
    io.err(`sendpool serve: listening on ${running.address}${metrics}${typeof dataDir === 'string' ? `, state in ${dataDir}` : ' (state in memory only)'}\n`);
    if (options['whatsapp'] !== undefined) io.err(`sendpool serve: channel whatsapp; Meta's webhooks at ${running.address}/whatsapp/webhook\n`);
    // The server keeps the process alive and closes on SIGINT/SIGTERM.
    return EXIT_OK;
  },
};
