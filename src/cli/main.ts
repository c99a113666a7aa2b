/**
 * The `sendpool` command line: capacity planning from a fleet description.
 * Exit codes: 0 ok, 2 usage or input error (one message on standard error, nothing written),
 * 3 a forecast or simulation that did not send every message (output written), 1 unexpected failure.
 */
import { businessesCommand } from './commands/businesses.js';
import { forecastCommand } from './commands/forecast.js';
import { serveCommand } from './commands/serve.js';
import { simulateCommand } from './commands/simulate.js';
import type { Command } from './commands/types.js';
import { docsFolder } from './docs-path.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, isUsageError } from './errors.js';
import { processIo, type Io } from './io.js';
import { VERSION } from './version.js';

const COMMANDS: readonly Command[] = [businessesCommand, forecastCommand, simulateCommand, serveCommand];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: sendpool COMMAND [options]

Capacity planning for sendpool fleets.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run \`sendpool COMMAND --help\` for a command's options, \`sendpool --version\` (-v) for the version.
Documentation: ${docsFolder()} (this command line: cli.md; the docs/… named in the help are there).
Exit codes: 0 ok, 2 usage or input error, 3 not every message sent (forecast, simulate),
1 unexpected failure.`;
}

export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io[name === undefined ? 'err' : 'out'](`${usage()}\n`);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    io.out(`${VERSION}\n`);
    return EXIT_OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err(`sendpool: unknown command ${JSON.stringify(name)} (commands: ${COMMANDS.map((c) => c.name).join(', ')}; see sendpool --help)\n`);
    return EXIT_USAGE;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (isUsageError(e)) {
      io.err(`sendpool ${command.name}: ${e.message}\n`);
      return EXIT_USAGE;
    }
    io.err(`sendpool ${command.name}: unexpected failure: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT_FAILURE;
  }
}

main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`sendpool: unexpected failure: ${String(e)}\n`);
    process.exitCode = EXIT_FAILURE;
  },
);
