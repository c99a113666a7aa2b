/** Checks of the engine's call arguments, each naming the call and argument it refuses. */
import { ArgumentError } from './errors.js';
import type { NumberStatus, TemplateStatus } from './fleet.js';
import { describeValue } from './problems.js';

const NUMBER_STATUSES: readonly NumberStatus[] = ['active', 'paused'];
const TEMPLATE_STATUSES: readonly TemplateStatus[] = ['active', 'paused', 'disabled'];

export function checkCount(argument: string, count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new ArgumentError(argument, 'a whole number, 0 or more', describeValue(count));
  }
}

export function checkNumberStatus(status: NumberStatus): void {
  if (!NUMBER_STATUSES.includes(status)) throw new ArgumentError('setNumberStatus(status)', 'one of "active", "paused"', describeValue(status));
}

export function checkTemplateStatus(status: TemplateStatus): void {
  if (!TEMPLATE_STATUSES.includes(status)) {
    throw new ArgumentError('setTemplateStatus(status)', 'one of "active", "paused", "disabled"', describeValue(status));
  }
}

export function checkUntil(api: string, status: string, until: number | undefined): number | undefined {
  if (until === undefined) return undefined;
  if (status !== 'paused') {
    throw new ArgumentError(`${api}(options.until)`, 'absent unless the status is "paused"', describeValue(until));
  }
  if (!Number.isSafeInteger(until) || until < 0) {
    throw new ArgumentError(`${api}(options.until)`, 'a clock time in whole milliseconds, 0 or more', describeValue(until));
  }
  return until;
}

/** `createEngine(options.packContactsFrom)`: a count of queued contacts, or Infinity. */
export function packFrom(value: number | undefined): number | undefined {
  if (value === undefined || value === Infinity || (Number.isSafeInteger(value) && value >= 0)) return value;
  throw new ArgumentError('createEngine(options.packContactsFrom)', 'a whole number, 0 or more, or Infinity', describeValue(value));
}
