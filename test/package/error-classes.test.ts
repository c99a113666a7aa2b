/**
 * Every error class follows one pattern: `name` set to the class name, a `Symbol.for` brand, and an
 * `isXError` guard that recognises errors of another copy of sendpool. The built ESM and CommonJS
 * files are two such copies (each has its own classes), so a guard of one must recognise an error of
 * the other. Needs the build (`npm test` runs it first).
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ContractHttpError, RequestClosedError, isContractHttpError, isRequestClosedError } from '../../src/server/http-errors.js';
import { UsageError, isUsageError } from '../../src/cli/errors.js';
import { ReportError, isReportError } from '../../src/server/report-error.js';
import { SmsEncodingError, isSmsEncodingError } from '../../src/server/channels/smpp-codec.js';

const dist = resolve(import.meta.dirname, '../../dist');
const require = createRequire(import.meta.url);
type Entry = Record<string, unknown>;
const load = async (entry: string): Promise<{ esm: Entry; cjs: Entry }> => ({
  esm: (await import(pathToFileURL(`${dist}/${entry}.js`).href)) as Entry,
  cjs: require(`${dist}/${entry}.cjs`) as Entry,
});

/** Each public error class: its entry and arguments that build one. */
const CLASSES: readonly [entry: string, name: string, args: readonly unknown[]][] = [
  ['index', 'FleetValidationError', [[]]],
  ['index', 'NotFoundError', ['business', 9]],
  ['index', 'ArgumentError', ['assign(count)', 'a positive integer', '-1']],
  ['index', 'SnapshotError', ['not a snapshot']],
  ['index', 'SubmissionError', [[]]],
  ['server', 'ServerOptionsError', [[]]],
  ['server', 'MissingPeerError', ['smpp', 'The SMPP channel']],
  ['server', 'ApiKeysError', [['keys[0].key: too short']]],
  ['server', 'SnapshotFileError', ['state.json', 'not JSON']],
  ['server', 'StateFileError', ['accepted journal', 'redis-state.accepted.jsonl', { field: '$.version', expected: '1', actual: '2' }]],
  ['redis', 'RedisStateError', ['lease script', 'an array of 7 numbers', 'OK']],
  ['redis', 'RedisUnavailableError', ['client', 'reconnecting']],
  ['redis', 'RedisTimeoutError', ['Redis call', 2000]],
  ['redis', 'FleetSyncStoppedError', []],
  ['whatsapp', 'WhatsAppChannelError', [[]]],
];

describe('error classes', () => {
  it.each(CLASSES)('%s %s: name, brand, and a guard that works across copies', async (entry, name, args) => {
    const { esm, cjs } = await load(entry);
    const guard = `is${name}`;
    for (const [made, checked] of [
      [esm, cjs],
      [cjs, esm],
    ] as const) {
      const Class = made[name] as new (...a: unknown[]) => Error;
      const isIt = checked[guard] as (e: unknown) => boolean;
      expect(Class).not.toBe(checked[name]);
      const e = new Class(...args);
      expect(e).toBeInstanceOf(Error);
      expect(e.name).toBe(name);
      expect(isIt(e)).toBe(true);
      expect(isIt(new Error('plain'))).toBe(false);
      expect(isIt({ name })).toBe(false);
      expect(isIt(null)).toBe(false);
    }
  });

  it("the internal ones too: ContractHttpError, RequestClosedError, the CLI's UsageError, ReportError, SmsEncodingError", () => {
    const http = new ContractHttpError('invalid_json', []);
    expect(http.name).toBe('ContractHttpError');
    expect(isContractHttpError(http)).toBe(true);
    expect(isContractHttpError(new Error('invalid_json'))).toBe(false);
    const closed = new RequestClosedError();
    expect(closed.name).toBe('RequestClosedError');
    expect(closed.message).toBe('the request closed before its body was decoded');
    expect(isRequestClosedError(closed)).toBe(true);
    expect(isRequestClosedError(http)).toBe(false);
    const usage = new UsageError('--x: expected y');
    expect(usage.name).toBe('UsageError');
    expect(isUsageError(usage)).toBe(true);
    expect(isUsageError(http)).toBe(false);
    const report = new ReportError('tickets-summary', 'no-generator', 'No generator');
    expect(report.name).toBe('ReportError');
    expect(isReportError(report)).toBe(true);
    expect(isReportError(usage)).toBe(false);
    const encoding = new SmsEncodingError('IA5', 'é');
    expect(encoding.name).toBe('SmsEncodingError');
    expect(encoding.message).toBe('IA5 (gsm7DataCoding 1): "é" (U+E9) has no ASCII code');
    expect(isSmsEncodingError(encoding)).toBe(true);
    expect(isSmsEncodingError(report)).toBe(false);
  });
});
