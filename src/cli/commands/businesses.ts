/** `sendpool businesses FLEET`: the spec's GET /messenger/businesses/ response for the fleet. */
import { createEngine } from '../../index.js';
import { fleetArgument, parse } from '../args.js';
import { EXIT_OK } from '../errors.js';
import { loadFleet } from '../fleet-file.js';
import type { Io } from '../io.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool businesses FLEET [--compact]

Prints the service's GET /messenger/businesses/ response for the fleet description FLEET, as JSON:
every business with the output (messages that may be sent now) of each template type, computed by
the engine with full buckets, and the type's template text (data), that text with sample values
(example) and the names of its placeholders (variables), taken from the type's active templates.
The output is exactly the spec's shape (parts 2.1, 2.2):
[{ "id", "name", "template_types": [{ "id", "name", "output", "data", "example", "variables" }] }]

Options:
      --compact   one line instead of indented JSON
  -h, --help      this help`;

export const businessesCommand: Command = {
  name: 'businesses',
  summary: "the spec's GET /messenger/businesses/ response for a fleet, as JSON",
  help: HELP,
  run(argv: readonly string[], io: Io): number {
    const args = parse('businesses', argv, { compact: { type: 'boolean' } });
    if (args.values['help'] === true) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    const file = fleetArgument('businesses', args.positionals);
    const { raw } = loadFleet(io, file);
    // The system clock: a timed pause in the fleet counts as ended once its time has passed.
    const engine = createEngine(raw);
    const body = engine.businesses();
    io.out(`${args.values['compact'] === true ? JSON.stringify(body) : JSON.stringify(body, null, 2)}\n`);
    return EXIT_OK;
  },
};
