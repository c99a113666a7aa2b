/**
 * `sendpool simulate FLEET --business ID --type ID --messages N`: runs the real engine and dispatch
 * loop on a simulated clock (src/cli/simulation.ts), then prints tables per number and template,
 * the completion time beside the forecast's, and writes the SVG chart when asked.
 */
import { parse } from '../args.js';
import { renderChart } from '../chart-svg.js';
import { formatDuration } from '../duration.js';
import { EXIT_INCOMPLETE, EXIT_OK, UsageError } from '../errors.js';
import { count, percent, share } from '../format.js';
import type { Io } from '../io.js';
import type { SimulateJson } from '../json-output.js';
import { limitCell, limitsAfter, numberColumns } from '../number-limits.js';
import { POOL_HELP, POOL_OPTIONS, readPoolRequest, type PoolRequest } from '../pool-flags.js';
import { noProgress, progressBar } from '../progress.js';
import { simulate } from '../simulation.js';
import { renderTable } from '../table.js';
import { runForecast } from './forecast.js';
import type { Command } from './types.js';

const HELP = `Usage: sendpool simulate FLEET --business ID --type ID --messages N [options]

Runs the real engine and dispatch loop on a simulated clock: submits N contacts, polls, reports
every message sent, and moves the clock to the engine's next wake-up, applying timed events when
the clock reaches them. Prints per number and per template what was sent, its share and when it
ran out, the completion time (and the forecast's, for comparison), and writes an SVG chart.

A progress bar is drawn on standard error when it is a terminal (never with --json). Exits 3
when not every message was sent (stopped by --horizon, or nothing left that can send).

Options:
      --chart FILE.svg     write the chart: messages sent over time per number, the pool
                           throughput line, markers for pauses and resumes
${POOL_HELP}`;

/** The engine keeps one reference per queued contact: ten million is about 100 MB. */
const MAX_MESSAGES = 10_000_000;

export const simulateCommand: Command = {
  name: 'simulate',
  summary: 'run the real engine on a simulated clock: tables, completion, SVG chart',
  help: HELP,
  run(argv: readonly string[], io: Io): number {
    const args = parse('simulate', argv, { ...POOL_OPTIONS, chart: { type: 'string' } });
    if (args.values['help'] === true) {
      io.out(`${HELP}\n`);
      return EXIT_OK;
    }
    const chartValue = args.values['chart'];
    const chart = typeof chartValue === 'string' ? chartValue : null;
    if (chart !== null && !chart.toLowerCase().endsWith('.svg')) {
      throw new UsageError(`--chart: expected a file name ending in .svg, got ${JSON.stringify(chart)}`);
    }
    const req = readPoolRequest('simulate', io, args, MAX_MESSAGES);
    const { pool } = req;

    const progress = io.errIsTTY && !req.json ? progressBar(io, pool.messages) : noProgress;
    const started = io.wallNow();
    let result;
    try {
      result = simulate({
        fleet: req.raw,
        businessId: pool.businessId,
        typeId: pool.typeId,
        messages: pool.messages,
        events: req.events,
        horizonMs: req.horizonMs,
        onProgress: (sent, now) => progress.update(sent, now),
      });
    } finally {
      progress.finish();
    }
    const wallMs = Math.round(io.wallNow() - started);
    const predicted = runForecast(req);
    const difference =
      result.completionMs !== null && predicted.completionMs !== null
        ? result.completionMs === predicted.completionMs
          ? 0
          : Math.abs(predicted.completionMs - result.completionMs) / Math.max(result.completionMs, predicted.completionMs)
        : null;

    const json: SimulateJson = {
      command: 'simulate',
      ...pool,
      events: result.events.map((e) => ({ atMs: e.atMs, at: formatDuration(e.atMs), event: e.label, throughputPerHour: e.throughputPerHour })),
      throughputPerHour: result.throughputAtStartPerHour,
      completed: result.completed,
      completionMs: result.completionMs,
      completion: result.completionMs === null ? null : formatDuration(result.completionMs),
      sent: result.sent,
      stoppedBy: result.stoppedBy ?? null,
      forecastCompletionMs: predicted.completionMs,
      forecastDifference: difference === null ? null : Math.round(difference * 1e6) / 1e6,
      numbers: result.numbers.map((n) => ({ ...n, share: share(n.sent, result.sent) })),
      templates: result.templates.map((t) => ({ ...t, share: share(t.sent, result.sent) })),
      chart,
      run: { polls: result.polls, wallMs },
    };

    // The chart is written before anything is printed: a path that cannot be written is the
    // user's error (exit 2) and leaves standard output empty.
    if (chart !== null) {
      const svg = renderChart({
        title: `${pool.businessName} / ${pool.typeName}: ${count(pool.messages)} messages`,
        phones: result.numbers.map((n) => n.phone),
        times: result.series.times,
        perNumber: result.series.perNumber,
        endMs: result.endMs,
        throughputAtStartPerHour: result.throughputAtStartPerHour,
        events: result.events,
      });
      try {
        io.writeFile(chart, svg);
      } catch (e) {
        throw new UsageError(`--chart ${chart}: cannot write: ${(e as { code?: string }).code ?? (e as Error).message}`);
      }
    }

    io.out(req.json ? `${JSON.stringify(json, null, 2)}\n` : renderSimulation(json, req, result.endMs));
    return json.completed ? EXIT_OK : EXIT_INCOMPLETE;
  },
};

function at(ms: number | null): string {
  return ms === null ? '-' : formatDuration(ms);
}

function renderSimulation(json: SimulateJson, req: PoolRequest, endMs: number): string {
  const lines: string[] = [];
  lines.push(`Simulation: ${count(json.messages)} messages for ${json.businessName} (business ${json.businessId}) / ${json.typeName} (type ${json.typeId}), fleet ${json.fleet}`);
  lines.push(`Pool at the start: throughput ${count(json.throughputPerHour)}/h`);
  lines.push(
    json.completed
      ? `Completed at ${json.completion} (simulated), all ${count(json.sent)} sent`
      : `Not completed: ${count(json.sent)} of ${count(json.messages)} sent, stopped by ${json.stoppedBy} at the end of the run`,
  );
  if (json.forecastCompletionMs !== null) {
    const diff = json.forecastDifference === null ? '' : ` (difference ${(json.forecastDifference * 100).toFixed(2)} %)`;
    lines.push(`Forecast for the same inputs: ${formatDuration(json.forecastCompletionMs)}${diff}`);
  }
  lines.push(`Run: ${count(json.run.polls)} polls in ${(json.run.wallMs / 1000).toFixed(2)} s of wall time`);
  lines.push('');
  if (json.events.length > 0) {
    lines.push('Events:');
    lines.push(
      renderTable(
        [{ header: 'at', align: 'right' }, { header: 'event' }, { header: 'pool throughput after', align: 'right' }],
        json.events.map((e) => [e.at, e.event, `${count(e.throughputPerHour)}/h`]),
      ),
    );
  }
  lines.push('Numbers:');
  lines.push(
    renderTable(
      numberColumns(false),
      json.numbers.map((n) => {
        const after = limitsAfter(n.phone, n, req.events, endMs);
        return [n.phone, limitCell(n.throughputPerHour, after.throughputPerHour), limitCell(n.messagingLimit24h, after.messagingLimit24h), count(n.sent), percent(n.sent, json.sent), at(n.ranOutAtMs)];
      }),
    ),
  );
  lines.push('Templates:');
  lines.push(
    renderTable(
      [{ header: 'id', align: 'right' }, { header: 'name' }, { header: 'sent', align: 'right' }, { header: 'share', align: 'right' }, { header: 'left the pool at', align: 'right' }],
      json.templates.map((t) => [String(t.id), t.name, count(t.sent), percent(t.sent, json.sent), at(t.ranOutAtMs)]),
    ),
  );
  if (json.chart !== null) lines.push(`Chart: ${json.chart}\n`);
  return lines.join('\n');
}
