/**
 * One group of benchmarks in a process of its own, for bench/isolated.ts: the argument is a JSON
 * `{ group, options }`; progress lines go to stderr, the results as one JSON line to stdout.
 */
import { assignBenchmarks, type SuiteOptions } from './assign.bench.js';
import type { Result } from './harness.js';
import { peerBenchmarks, type PeerOptions } from './peers.bench.js';

export type ChildRequest = { readonly group: 'assign'; readonly options: Omit<SuiteOptions, 'log'> } | { readonly group: 'peers'; readonly options: Omit<PeerOptions, 'log'> };

const request = JSON.parse(process.argv[2] ?? '{}') as ChildRequest;
const log = (line: string): void => void process.stderr.write(`  ${line}\n`);
let results: Result[];
if (request.group === 'assign') results = await assignBenchmarks({ ...request.options, log });
else if (request.group === 'peers') results = await peerBenchmarks({ ...request.options, log });
else throw new Error(`bench child: unknown group ${JSON.stringify((request as { group?: unknown }).group)}`);
process.stdout.write(`${JSON.stringify(results)}\n`);
