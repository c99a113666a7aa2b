/**
 * `sendpool serve`: the slot of the reference server (src/server). When the server entry
 * (dist/server.js, built from src/server/index.ts) exports `runServer(argv)`, this command hands
 * it the arguments and exits with what it resolves to; until then it says so and exits 2.
 */
import { EXIT_OK, EXIT_USAGE } from '../errors.js';
import type { Io } from '../io.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool serve [...]

Runs the reference HTTP server of the service (src/server). Not available yet in this version:
the command exits with code 2 until the server lands.`;

type RunServer = (argv: readonly string[]) => number | Promise<number>;

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
  summary: 'the reference HTTP server (not available yet)',
  help: HELP,
  async run(argv: readonly string[], io: Io): Promise<number> {
    const runServer = await findRunServer();
    if (runServer) return runServer(argv);
    if (argv.includes('--help') || argv.includes('-h')) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    io.err('sendpool serve: not available yet (the reference server is not part of this build)\n');
    return EXIT_USAGE;
  },
};
