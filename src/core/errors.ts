/**
 * Programmer errors: thrown for calls that can never succeed as written (an unknown business, a
 * negative count, a fleet that does not validate). Denials that depend on the moment (no capacity,
 * everything paused) are never thrown: they come back as data.
 *
 * Each class carries a marker under a `Symbol.for` key, so its `isXError` guard recognises errors
 * thrown by another copy of sendpool in the same process (two versions in node_modules).
 */
import type { Problem } from './problems.js';

const FLEET = Symbol.for('sendpool.FleetValidationError');
const NOT_FOUND = Symbol.for('sendpool.NotFoundError');
const ARGUMENT = Symbol.for('sendpool.ArgumentError');
const SNAPSHOT = Symbol.for('sendpool.SnapshotError');
const SUBMISSION = Symbol.for('sendpool.SubmissionError');

function marked(e: unknown, marker: symbol): boolean {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[marker] === true;
}

/** A fleet description (or a change to one) that does not validate; nothing of it was applied. */
export class FleetValidationError extends Error {
  readonly [FLEET] = true;
  /** Every problem found, each with its JSON path, expected and actual value. */
  readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[], subject = 'fleet description') {
    const shown = problems.slice(0, 20).map((p) => `  - ${p.message}`);
    if (problems.length > 20) shown.push(`  - … and ${problems.length - 20} more`);
    super(`Invalid ${subject}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${shown.join('\n')}`);
    this.name = 'FleetValidationError';
    this.problems = problems;
  }
}

/** True when `e` is a {@link FleetValidationError}, from this copy of sendpool or another. */
export function isFleetValidationError(e: unknown): e is FleetValidationError {
  return marked(e, FLEET);
}

/** What kind of thing a {@link NotFoundError} looked for. */
export type NotFoundKind = 'business' | 'template type' | 'number' | 'template' | 'message' | 'submission' | 'portfolio';

/** A call named a business, template type, number, template, message or portfolio the engine does not have. */
export class NotFoundError extends Error {
  readonly [NOT_FOUND] = true;
  readonly kind: NotFoundKind;
  readonly id: string | number;

  constructor(kind: NotFoundKind, id: string | number, context = '') {
    super(`Unknown ${kind} ${JSON.stringify(id)}${context ? ` ${context}` : ''}`);
    this.name = 'NotFoundError';
    this.kind = kind;
    this.id = id;
  }
}

/** True when `e` is a {@link NotFoundError}, from this copy of sendpool or another. */
export function isNotFoundError(e: unknown): e is NotFoundError {
  return marked(e, NOT_FOUND);
}

/** An argument outside what the API accepts: a negative count, an unknown status, a clock going back. */
export class ArgumentError extends Error {
  readonly [ARGUMENT] = true;
  /** The API and parameter at fault, e.g. `assign(count)`. */
  readonly argument: string;

  constructor(argument: string, expected: string, actual: string) {
    super(`Expected \`${argument}\` to be ${expected}, got ${actual}`);
    this.name = 'ArgumentError';
    this.argument = argument;
  }
}

/** True when `e` is an {@link ArgumentError}, from this copy of sendpool or another. */
export function isArgumentError(e: unknown): e is ArgumentError {
  return marked(e, ARGUMENT);
}

/**
 * A snapshot that cannot be restored: malformed, or written by a newer sendpool; or rows that cannot
 * make one (`mergeSubmission`: a change of a submission whose first change was never applied).
 */
export class SnapshotError extends Error {
  readonly [SNAPSHOT] = true;
  readonly problems: readonly Problem[];

  constructor(message: string, problems: readonly Problem[] = []) {
    super(problems.length ? `${message}\n${problems.map((p) => `  - ${p.message}`).join('\n')}` : message);
    this.name = 'SnapshotError';
    this.problems = problems;
  }
}

/** True when `e` is a {@link SnapshotError}, from this copy of sendpool or another. */
export function isSnapshotError(e: unknown): e is SnapshotError {
  return marked(e, SNAPSHOT);
}

/** A submission that can never be queued (unknown business or type, bad retries, no contacts); nothing of it was queued. */
export class SubmissionError extends Error {
  readonly [SUBMISSION] = true;
  /** Every problem found, each with its JSON path, expected and actual value. */
  readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[]) {
    super(`Invalid submission: ${problems.map((p) => p.message).join('; ')}`);
    this.name = 'SubmissionError';
    this.problems = problems;
  }
}

/** True when `e` is a {@link SubmissionError}, from this copy of sendpool or another. */
export function isSubmissionError(e: unknown): e is SubmissionError {
  return marked(e, SUBMISSION);
}
