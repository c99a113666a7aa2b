/**
 * Flags shared by `forecast` and `simulate`: the pool, the message count, the events, the horizon.
 * Everything is read and validated here, before anything runs.
 */
import type { Fleet } from '../index.js';
import { fleetArgument, many, optionalDuration, requiredCount, requiredId, type Options, type Parsed } from './args.js';
import { readEvents, readShortcuts, ordered, SHORTCUTS, type ShortcutFlag, type TimedEvent } from './events-file.js';
import { findPool, loadFleet, readJsonFile } from './fleet-file.js';
import type { Io } from './io.js';
import type { PoolJson } from './json-output.js';

export const POOL_OPTIONS: Options = {
  business: { type: 'string', short: 'b' },
  type: { type: 'string', short: 't' },
  messages: { type: 'string', short: 'n' },
  events: { type: 'string' },
  horizon: { type: 'string' },
  json: { type: 'boolean' },
  ...Object.fromEntries(Object.keys(SHORTCUTS).map((k) => [k, { type: 'string', multiple: true }])),
};

const DEFAULT_HORIZON_MS = 30 * 86_400_000;

export const POOL_HELP = `  -b, --business ID        business (BM) id in the fleet (required)
  -t, --type ID            template type id of that business (required)
  -n, --messages N         messages to send (required; 1000000, 1_000_000 and 1,000,000 all work)
      --events FILE        timed changes, a JSON array (see docs/cli.md, "Events file")
      --pause-number PHONE@WHEN      pause a number at a time, e.g. 5511990000001@30m (repeatable)
      --resume-number PHONE@WHEN     resume a number (repeatable)
      --pause-template ID@WHEN       pause a template, e.g. 101@1h (repeatable)
      --disable-template ID@WHEN     disable a template (repeatable)
      --resume-template ID@WHEN      make a template active again (repeatable)
      --horizon DURATION   give up when not done by then (default 30d)
      --json               machine-readable output (shape in docs/cli.md)
  -h, --help               this help

Durations: 45s, 30m, 2h, 1h30m, 1d, 1d6h, 250ms (whole numbers, units largest first).`;

export interface PoolRequest {
  readonly file: string;
  readonly raw: unknown;
  readonly fleet: Fleet;
  readonly pool: PoolJson;
  readonly events: TimedEvent[];
  readonly horizonMs: number;
  readonly json: boolean;
}

export function readPoolRequest(command: string, io: Io, args: Parsed, maxMessages: number): PoolRequest {
  const { values, positionals } = args;
  const file = fleetArgument(command, positionals);
  // Flags first (cheap, no I/O), then the files.
  const businessId = requiredId('business', values['business']);
  const typeId = requiredId('type', values['type']);
  const messages = requiredCount('messages', values['messages'], maxMessages);
  const horizonMs = optionalDuration('horizon', values['horizon']) ?? DEFAULT_HORIZON_MS;
  const { raw, fleet } = loadFleet(io, file);
  const names = findPool(file, fleet, businessId, typeId);
  const events: TimedEvent[] = [];
  const eventsFile = values['events'];
  if (typeof eventsFile === 'string') events.push(...readEvents(eventsFile, readJsonFile(io, eventsFile), fleet));
  const shortcuts: Partial<Record<ShortcutFlag, string[]>> = {};
  for (const flag of Object.keys(SHORTCUTS) as ShortcutFlag[]) shortcuts[flag] = many(values[flag]);
  events.push(...readShortcuts(shortcuts, fleet));
  return {
    file,
    raw,
    fleet,
    pool: { fleet: file, businessId, businessName: names.businessName, typeId, typeName: names.typeName, messages },
    events: ordered(events),
    horizonMs,
    json: values['json'] === true,
  };
}
