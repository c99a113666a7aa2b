/** The outbox's snapshot: what it checks before an outbox is restored from one. */
import { type Problem, problem } from '../core/problems.js';
import type { OutboxSnapshot } from './outbox-types.js';

/** Every problem of a snapshot that would make restoring it throw or lose events. */
export function snapshotProblems(s: OutboxSnapshot): Problem[] {
  const out: Problem[] = [];
  if (typeof s !== 'object' || s === null) return [problem('$', 'an outbox snapshot object', s)];
  if (s.version !== 1) out.push(problem('$.version', '1', s.version));
  if (!Array.isArray(s.entries)) out.push(problem('$.entries', 'an array', s.entries));
  if (!Array.isArray(s.finished)) out.push(problem('$.finished', 'an array', s.finished));
  if (!Array.isArray(s.outcomes)) out.push(problem('$.outcomes', 'an array', s.outcomes));
  if (out.length > 0) return out;
  s.entries.forEach((e, i) => {
    if (typeof e?.event?.id !== 'string') out.push(problem(`$.entries[${i}].event.id`, 'a string', e?.event?.id));
    if (!Number.isSafeInteger(e?.attempts) || e.attempts < 0) out.push(problem(`$.entries[${i}].attempts`, 'a non-negative integer', e?.attempts));
    const k = e?.state?.kind;
    if (k !== 'pending' && k !== 'in-flight' && k !== 'held') out.push(problem(`$.entries[${i}].state.kind`, '"pending", "in-flight" or "held"', k));
  });
  return out;
}
