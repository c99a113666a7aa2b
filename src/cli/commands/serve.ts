/**
 * `sendpool serve FLEET`: the slot of the reference server (src/server). The server entry
 * (dist/server.js, built from src/server/index.ts) is loaded at run time; when it exports
 * `runServer(options)`, the flags below are handed to it and the process keeps serving until
 * SIGINT/SIGTERM. When it does not (a build without the server), the command says "not available
 * yet" and exits 2. The server's own options and behaviour belong to the server (docs there).
 */
import { fleetArgument, parse } from '../args.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from '../errors.js';
import { loadFleet } from '../fleet-file.js';
import type { Io } from '../io.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool serve FLEET [--port N] [--host HOST] [--keys FILE] [--snapshot FILE]

Runs the reference HTTP server of the service (src/server) on the fleet description FLEET, until
SIGINT or SIGTERM. Exits 2 with "not available yet" when this build has no server.

Options:
      --port N         port to listen on (default 3000)
      --host HOST      address to listen on (default 127.0.0.1)
      --keys FILE      API keys file; keys in SENDPOOL_API_KEYS are added
      --snapshot FILE  read at start when it exists, written on shutdown
  -h, --help           this help`;

type RunServer = (options: Record<string, unknown>) => Promise<{ readonly address: string }>;

async function findRunServer(): Promise<RunServer | undefined> {
  try {
    // Loaded at run time from beside dist/cli.js, so the CLI bundle does not carry the server.
    const url = new URL('./server.js', import.meta.url).href;
    const mod = (await import(url)) as Record<string, unknown>;
    const run = mod['runServer'];
    return typeof run === 'function' ? (run as RunServer) : undefined;
  } catch {
    return undefined;
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
    });
    if (args.values['help'] === true) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    const runServer = await findRunServer();
    if (!runServer) {
      io.err('sendpool serve: not available yet (this build has no reference server)\n');
      return EXIT_USAGE;
    }
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
    let running;
    try {
      running = await runServer(options);
    } catch (e) {
      // Configuration the user must fix (keys, snapshot, address in use) is theirs: exit 2.
      throw new UsageError(e instanceof Error ? e.message : String(e));
    }
    io.err(`sendpool serve: listening on ${running.address}\n`);
    // The server keeps the process alive and closes on SIGINT/SIGTERM.
    return EXIT_OK;
  },
};
