/**
 * `sendpool serve FLEET`: the reference server (src/server). Its entry (dist/server.js) is loaded at
 * run time, so the other commands never load fastify; the flags are handed to `runServer` and the
 * process serves until SIGINT/SIGTERM. When the server cannot load (the optional packages fastify
 * and prom-client are not installed), the command says why and exits 2. The server's own options
 * and behaviour are documented with the server.
 */
import { fleetArgument, parse } from '../args.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from '../errors.js';
import { loadFleet } from '../fleet-file.js';
import type { Io } from '../io.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool serve FLEET [--port N] [--host HOST] [--keys FILE] [--snapshot FILE] [--data-dir DIR | --memory]

Runs the reference HTTP server of the service (sendpool/server) on the fleet description FLEET,
until SIGINT or SIGTERM. It needs the optional packages fastify and prom-client.

Options:
      --port N         port to listen on (default 3000)
      --host HOST      address to listen on (default 127.0.0.1)
      --keys FILE      API keys file; keys in SENDPOOL_API_KEYS are added
      --snapshot FILE  read at start when it exists, written on shutdown
      --data-dir DIR   where durable state is kept (SQLite; default ./sendpool-data): what was
                       answered 202 survives kill -9 (docs/server.md, "Durable state")
      --memory         keep state in memory only (lost on a crash; for trying things out)
  -h, --help           this help`;

type RunServer = (options: Record<string, unknown>) => Promise<{ readonly address: string }>;

/** The server entry, loaded at run time from beside dist/cli.js so the CLI bundle does not carry it. */
async function loadRunServer(): Promise<{ readonly run: RunServer } | { readonly error: string }> {
  try {
    const mod = (await import(new URL('./server.js', import.meta.url).href)) as Record<string, unknown>;
    const run = mod['runServer'];
    return typeof run === 'function' ? { run: run as RunServer } : { error: 'the server entry has no runServer' };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    // The usual cause: the optional peer packages are not installed.
    const missing = /Cannot find (?:package|module) '(fastify|prom-client)[^']*'/.exec(text)?.[1];
    return { error: missing ? `it needs the optional package ${missing}: npm install fastify prom-client` : text };
  }
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'the reference HTTP server on a fleet (when this build has it)',
  help: HELP,
  async run(argv: readonly string[], io: Io): Promise<number> {
    const args = parse('serve', argv, {
      port: { type: 'string' },
      host: { type: 'string' },
      keys: { type: 'string' },
      snapshot: { type: 'string' },
      'data-dir': { type: 'string' },
      memory: { type: 'boolean' },
    });
    if (args.values['help'] === true) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    const loaded = await loadRunServer();
    if ('error' in loaded) {
      io.err(`sendpool serve: the reference server cannot start: ${loaded.error}\n`);
      return EXIT_USAGE;
    }
    const runServer = loaded.run;
    const fleetFile = fleetArgument('serve', args.positionals);
    loadFleet(io, fleetFile); // the same messages as the other commands for a bad fleet
    const portText = args.values['port'];
    let port: number | undefined;
    if (typeof portText === 'string') {
      port = Number(portText);
      if (!/^[0-9]+$/.test(portText) || port > 65_535) throw new UsageError(`--port: expected a port from 0 to 65535, got ${JSON.stringify(portText)}`);
    }
    const str = (k: string) => (typeof args.values[k] === 'string' ? (args.values[k] as string) : undefined);
    const options: Record<string, unknown> = { fleetFile };
    if (port !== undefined) options['port'] = port;
    if (str('host') !== undefined) options['host'] = str('host');
    if (str('keys') !== undefined) options['keysFile'] = str('keys');
    if (str('snapshot') !== undefined) options['snapshotFile'] = str('snapshot');
    // Durable by default: a 202 is a promise (docs/decisions.md, "The server is durable by default").
    if (args.values['memory'] === true) {
      if (str('data-dir') !== undefined) throw new UsageError('--memory and --data-dir: give one or the other');
    } else options['dataDir'] = str('data-dir') ?? 'sendpool-data';
    let running;
    try {
      running = await runServer(options);
    } catch (e) {
      // Configuration the user must fix (keys, snapshot, address in use) is theirs: exit 2.
      throw new UsageError(e instanceof Error ? e.message : String(e));
    }
    io.err(`sendpool serve: listening on ${running.address}${options['dataDir'] === undefined ? ' (state in memory only)' : `, state in ${String(options['dataDir'])}`}\n`);
    // The server keeps the process alive and closes on SIGINT/SIGTERM.
    return EXIT_OK;
  },
};
