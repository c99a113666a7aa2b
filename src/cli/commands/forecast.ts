/**
 * `sendpool forecast FLEET --business ID --type ID --messages N`: when N messages would be sent at
 * the pool's limits, hour by hour, and which limit holds each number back when. Pure computation
 * (src/core/forecast.ts); no engine runs.
 */
import { forecast, type Forecast } from '../../core/forecast.js';
import { parse } from '../args.js';
import { formatDuration } from '../duration.js';
import { EXIT_INCOMPLETE, EXIT_OK } from '../errors.js';
import { count, percent, share } from '../format.js';
import type { Io } from '../io.js';
import type { ForecastJson } from '../json-output.js';
import { limitCell, limitsAfter, numberColumns } from '../number-limits.js';
import { describePhases } from '../phases.js';
import { POOL_HELP, POOL_OPTIONS, readPoolRequest, type PoolRequest } from '../pool-flags.js';
import { renderTable } from '../table.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool forecast FLEET --business ID --type ID --messages N [options]

Computes from the numbers' limits when N messages of the template type would be sent: hour by
hour, with the 24 h messaging limits, and which limit holds each number back (per-second, hourly,
24 h, paused) and when. Exact for the engine's windows; agrees with \`sendpool simulate\`.
Exits 3 when not every message would be sent (by --horizon, or ever).

Options:
${POOL_HELP}`;

/** Most rows of the schedule; longer runs group hours (2, 3, 4, 6, 12, 24 per row). */
const MAX_ROWS = 48;

function forecastJson(req: PoolRequest, f: Forecast): ForecastJson {
  const numbers = req.fleet.businesses.find((b) => b.id === req.pool.businessId)!.numbers;
  return {
    command: 'forecast',
    ...req.pool,
    events: req.events.map((e) => ({ atMs: e.change.at, at: formatDuration(e.change.at), event: e.label })),
    throughputPerHour: f.throughputPerHour,
    outputAtStart: f.outputAtStart,
    completed: f.completed,
    completionMs: f.completionMs,
    completion: f.completionMs === null ? null : formatDuration(f.completionMs),
    sent: f.sent,
    stoppedBy: f.stoppedBy ?? null,
    hours: f.hours,
    numbers: f.numbers.map((n, i) => ({
      phone: n.phone,
      throughputPerHour: numbers[i]!.throughputPerHour,
      messagingLimit24h: numbers[i]!.messagingLimit24h,
      messagesPerSecond: numbers[i]!.messagesPerSecond ?? null,
      sent: n.sent,
      share: share(n.sent, req.pool.messages),
      ranOutAtMs: n.ranOutAtMs,
      phases: n.phases,
    })),
  };
}

export function runForecast(req: PoolRequest): Forecast {
  return forecast({
    fleet: req.fleet,
    businessId: req.pool.businessId,
    typeId: req.pool.typeId,
    messages: req.pool.messages,
    changes: req.events.map((e) => e.change),
    horizonMs: req.horizonMs,
  });
}

function schedule(f: Forecast): string {
  const hours = f.hours;
  const group = [1, 2, 3, 4, 6, 12, 24, 48, 168].find((g) => Math.ceil(hours.length / g) <= MAX_ROWS) ?? 168;
  const rows: string[][] = [];
  for (let k = 0; k < hours.length; k += group) {
    const slice = hours.slice(k, k + group);
    const first = slice[0]!;
    const last = slice[slice.length - 1]!;
    const sent = slice.reduce((s, h) => s + h.sent, 0);
    rows.push([
      `${formatDuration(first.fromMs)}`,
      formatDuration(f.completionMs !== null && k + group >= hours.length ? f.completionMs : last.fromMs + 3_600_000),
      count(sent),
      count(last.total),
      percent(last.total, f.messages),
      String(Math.max(...slice.map((h) => h.limitedBy24h))),
    ]);
  }
  const title = group === 1 ? 'Hour by hour' : `By ${group} hours`;
  return `${title}:\n${renderTable(
    [{ header: 'from' }, { header: 'to' }, { header: 'sent', align: 'right' }, { header: 'total', align: 'right' }, { header: 'done', align: 'right' }, { header: 'at 24h limit', align: 'right' }],
    rows,
  )}`;
}

function renderForecast(json: ForecastJson, f: Forecast, req: PoolRequest): string {
  const lines: string[] = [];
  lines.push(`Forecast: ${count(json.messages)} messages for ${json.businessName} (business ${json.businessId}) / ${json.typeName} (type ${json.typeId}), fleet ${json.fleet}`);
  lines.push(`Pool at the start: ${json.numbers.length} number(s), throughput ${count(json.throughputPerHour)}/h, output ${count(json.outputAtStart)} at once`);
  if (json.events.length > 0) lines.push(`Events: ${json.events.map((e) => `${e.at} ${e.event}`).join('; ')}`);
  lines.push(
    json.completed
      ? `Completion: ${json.completion} after the start (all ${count(json.messages)} sent)`
      : `Not completed: ${count(json.sent)} of ${count(json.messages)} sent, stopped by ${json.stoppedBy}`,
  );
  lines.push('');
  lines.push(schedule(f));
  lines.push('Numbers:');
  lines.push(
    renderTable(
      numberColumns(true),
      json.numbers.map((n) => {
        const after = limitsAfter(n.phone, n, req.events, json.completionMs ?? req.horizonMs);
        return [
          n.phone,
          limitCell(n.throughputPerHour, after.throughputPerHour),
          limitCell(n.messagingLimit24h, after.messagingLimit24h),
          limitCell(n.messagesPerSecond, after.messagesPerSecond),
          count(n.sent),
          percent(n.sent, json.messages),
          n.ranOutAtMs === null ? '-' : formatDuration(n.ranOutAtMs),
          describePhases(n.phases, json.completionMs),
        ];
      }),
    ),
  );
  return `${lines.join('\n')}`;
}

export const forecastCommand: Command = {
  name: 'forecast',
  summary: 'when N messages would be sent, hour by hour, and which limits bind',
  help: HELP,
  run(argv: readonly string[], io: Io): number {
    const args = parse('forecast', argv, POOL_OPTIONS);
    if (args.values['help'] === true) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    const req = readPoolRequest('forecast', io, args, 1e12);
    const f = runForecast(req);
    const json = forecastJson(req, f);
    io.out(req.json ? `${JSON.stringify(json, null, 2)}\n` : renderForecast(json, f, req));
    return json.completed ? EXIT_OK : EXIT_INCOMPLETE;
  },
};
