/**
 * Fleet descriptions for the benchmarks: one business (id 1) with one template type (id 10) over
 * N numbers and T templates, or many businesses sharing one template (failover of a template).
 */
import type { FleetDescription, NumberDescription, TemplateDescription } from '../src/index.js';

export const BUSINESS = 1;
export const TYPE = 10;
/** Ample capacity: never the limit during a run. */
export const AMPLE_PER_HOUR = 1_000_000_000;
export const AMPLE_PER_24H = 1_000_000_000_000;

export function phoneOf(i: number): string {
  return `5511${String(i).padStart(9, '0')}`;
}

export interface FleetShape {
  /** Numbers in the pool. */
  readonly numbers: number;
  /** Templates of the type. @default 1 */
  readonly templates?: number;
  /**
   * Share of the numbers (the first ones after every tenth, spread over the pool) given a limit of
   * one message per hour and per 24 h, so that once used they wait on the heap. @default 0
   */
  readonly exhausted?: number;
}

/** Whether number `i` of `n` is one of the exhausted share (spread evenly, never all). */
export function isExhausted(i: number, n: number, share: number): boolean {
  if (share <= 0) return false;
  const keep = Math.max(1, Math.round(n * (1 - share)));
  // Keep every (n / keep)-th number ample, the rest exhausted.
  return Math.floor((i * keep) / n) === Math.floor(((i + 1) * keep) / n);
}

export function makeFleet(shape: FleetShape): FleetDescription {
  const t = shape.templates ?? 1;
  const share = shape.exhausted ?? 0;
  const numbers: NumberDescription[] = [];
  for (let i = 0; i < shape.numbers; i++) {
    const tiny = isExhausted(i, shape.numbers, share);
    numbers.push({
      phone: phoneOf(i),
      throughputPerHour: tiny ? 1 : AMPLE_PER_HOUR,
      messagingLimit24h: tiny ? 1 : AMPLE_PER_24H,
      status: 'active',
    });
  }
  const templates: TemplateDescription[] = [];
  for (let k = 0; k < t; k++) {
    templates.push({ id: 100 + k, name: `bench_${k}`, text: 'Hi {{1}}, your code is {{2}}.', businessIds: [BUSINESS], status: 'active' });
  }
  return {
    businesses: [{ id: BUSINESS, name: 'Bench', numbers, templateTypes: [{ id: TYPE, name: 'bench', templateIds: templates.map((x) => x.id) }] }],
    templates,
  };
}

/**
 * `pools` businesses of `perPool` numbers each; each has one type with two templates: template 1,
 * shared by every business, and one of its own.
 */
export function makeSharedTemplateFleet(pools: number, perPool: number): FleetDescription {
  const businessIds = Array.from({ length: pools }, (_, b) => b + 1);
  const templates: TemplateDescription[] = [{ id: 1, name: 'shared', text: 'Hi {{1}}.', businessIds, status: 'active' }];
  let slot = 0;
  const businesses = businessIds.map((id) => {
    const numbers: NumberDescription[] = [];
    for (let i = 0; i < perPool; i++) {
      numbers.push({ phone: phoneOf(slot++), throughputPerHour: AMPLE_PER_HOUR, messagingLimit24h: AMPLE_PER_24H, status: 'active' });
    }
    templates.push({ id: 1000 + id, name: `own_${id}`, text: 'Hello {{1}}.', businessIds: [id], status: 'active' });
    return { id, name: `B${id}`, numbers, templateTypes: [{ id: TYPE, name: 'bench', templateIds: [1, 1000 + id] }] };
  });
  return { businesses, templates };
}
