/**
 * `npm run bench [-- --json] [--quick] [--filter <text>] [--repeats <n>]`
 *
 * Prints a table of every figure, peers as ratios to sendpool, and the targets met or missed.
 * --json also writes bench/results/latest.json and the chart docs/benchmarks-assign.svg.
 * --quick runs tiny sizes for a few iterations (a smoke run, not figures to trust).
 * --filter runs only cases whose id contains the text (e.g. "n=100 ", "peers", "failover").
 * --repeats runs each fleet shape's cases in that many processes and keeps medians (default 3).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderChart } from './chart.js';
import type { Result } from './harness.js';
import { ROOT } from './paths.js';
import { runSuite, type SuiteReport } from './suite.js';

function parseArgs(argv: readonly string[]): { json: boolean; quick: boolean; filter: string | undefined; repeats: number | undefined } {
  let json = false;
  let quick = false;
  let filter: string | undefined;
  let repeats: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '--quick') quick = true;
    else if (a === '--filter') filter = argv[++i];
    else if (a.startsWith('--filter=')) filter = a.slice('--filter='.length);
    else if (a === '--repeats') repeats = Number(argv[++i]);
    else throw new Error(`bench: unknown argument ${JSON.stringify(a)} (expected --json, --quick, --filter <text>, --repeats <n>)`);
  }
  if (repeats !== undefined && (!Number.isInteger(repeats) || repeats < 1)) throw new Error(`bench: --repeats expects a whole number >= 1, got ${JSON.stringify(String(repeats))}`);
  return { json, quick, filter, repeats };
}

function num(x: number | undefined, digits = 0): string {
  return x === undefined ? '' : x.toLocaleString('en-US', { maximumFractionDigits: digits });
}

export function formatTable(results: readonly Result[]): string {
  const rows = results.map((r) => [
    r.id,
    r.opsPerSecond !== undefined ? num(r.opsPerSecond) : r.bytes !== undefined ? `${r.bytes} B` : '',
    r.microsPerOp !== undefined ? num(r.microsPerOp, 4) : '',
    r.ratioToSendpool !== undefined ? `x${r.ratioToSendpool.toFixed(2)}` : '',
    r.rme !== undefined ? `±${r.rme.toFixed(1)}%` : '',
    r.note ?? '',
  ]);
  const head = ['case', 'ops/s (or bytes)', 'µs/op', 'vs sendpool', 'rme', 'note'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((s, c) => (c === 1 || c === 2 ? s.padStart(widths[c]!) : s.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatTargets(report: SuiteReport): string {
  return report.targets.map((t) => `${t.met === null ? '  ?  ' : t.met ? ' met ' : 'MISS '} ${t.target}: ${t.measured}`).join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const report = await runSuite({ quick: args.quick, filter: args.filter, ...(args.repeats === undefined ? {} : { repeats: args.repeats }), log: (l) => process.stderr.write(`  ${l}\n`) });
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const m = report.machine;
  console.log(`\nsendpool benchmarks — ${m.cpu}, ${m.cores} cores, Node ${m.node}, ${report.date}${args.quick ? ' (quick: not figures to trust)' : ''}, ${seconds} s\n`);
  console.log(formatTable(report.results));
  console.log('\nTargets (issue 4; ratios from this run):');
  console.log(formatTargets(report));
  if (args.json) {
    const root = pathToFileURL(`${ROOT}/`);
    const dir = fileURLToPath(new URL('bench/results/', root));
    mkdirSync(dir, { recursive: true });
    const command = `npm run bench -- --json${args.quick ? ' --quick' : ''}${args.filter === undefined ? '' : ` --filter ${JSON.stringify(args.filter)}`}${args.repeats === undefined ? '' : ` --repeats ${args.repeats}`}`;
    writeFileSync(`${dir}latest.json`, `${JSON.stringify({ command, seconds: Number(seconds), ...report }, null, 2)}\n`);
    const svg = fileURLToPath(new URL('docs/benchmarks-assign.svg', root));
    writeFileSync(
      svg,
      renderChart(
        report.results,
        `${m.cpu}, ${m.cores} cores, Node ${m.node}, ${report.date.slice(0, 10)}; median of tinybench iterations${args.quick ? '' : `, median of ${args.repeats ?? 3} processes`}`,
      ),
    );
    console.log(`\nwrote bench/results/latest.json and docs/benchmarks-assign.svg`);
  }
}

await main();
