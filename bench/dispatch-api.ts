/**
 * The dispatch loop's API as the benchmarks use it, typed structurally: `engine.submit` /
 * `engine.poll` / `engine.report` are being written in src/core; until they exist the dispatch
 * benchmarks are skipped with a printed note rather than failing to compile or run.
 */
import type { Engine } from '../src/index.js';

export interface DispatchContact {
  readonly phone: string;
  readonly variables?: readonly string[];
}

export interface DispatchEngine {
  submit(submission: { businessId: number; typeId: number; campaignId?: number; contacts: readonly DispatchContact[] }): { accepted: number };
  poll(options?: { limit?: number }): readonly { messageId: string }[];
  report?(messageId: string, outcome: { status: 'sent' }): unknown;
  takeOutcomes?(): unknown;
}

/** The engine as a dispatch engine, or a note saying why not. */
export function dispatchOf(engine: Engine): DispatchEngine | string {
  const e = engine as unknown as Partial<DispatchEngine>;
  if (typeof e.submit !== 'function') return 'skipped: engine.submit does not exist yet';
  if (typeof e.poll !== 'function') return 'skipped: engine.poll does not exist yet';
  return e as DispatchEngine;
}

/** `count` contacts numbered from `from`: a phone and two values each. */
export function makeContacts(count: number, from = 0): DispatchContact[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return { phone: `55219${String(i).padStart(8, '0')}`, variables: [`Customer ${i}`, `${i}`] };
  });
}
