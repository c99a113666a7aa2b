/**
 * Bounds on the problems a parser lists. A 10 MiB body can hold a million faults (10,000 contacts
 * of a hundred bad values each); listing each one costs seconds of the event loop and hundreds of
 * megabytes, which one client must not be able to make every other client wait for. So a parser
 * keeps the first problems in the order it finds them and counts the rest, and says so in one last
 * problem, which the error answer reads back to give the exact total (`problem_count`).
 */
import type { Problem } from '../core/problems.js';

/** Most problems a parser lists for one body; the rest are counted in one last problem. */
export const MAX_PROBLEMS_LISTED = 1000;

/** Problems that stand for problems not listed, and how many each stands for. */
const notListed = new WeakMap<Problem, number>();

/** The problem that says `count` more problems were found and not listed. */
function restProblem(count: number, listed: number): Problem {
  const p: Problem = {
    path: '$',
    expected: `at most ${listed} problems listed`,
    actual: `${count} more`,
    message: `$: ${count} more problem${count === 1 ? '' : 's'} found and not listed (the first ${listed} are)`,
  };
  notListed.set(p, count);
  return p;
}

/** True for the last problem of a capped list, which stands for the problems not listed. */
export function isNotListed(p: Problem): boolean {
  return notListed.has(p);
}

/**
 * The first `max` of `total` problems, plus one that counts the rest when there are more. `listed`
 * holds the first problems found (at least `max` of them when `total` is larger).
 */
export function capProblems(listed: readonly Problem[], total: number, max = MAX_PROBLEMS_LISTED): Problem[] {
  if (total <= max && listed.length <= max) return [...listed];
  const shown = listed.slice(0, max);
  return [...shown, restProblem(total - shown.length, shown.length)];
}

/**
 * How many problems a list stands for: its length, with the last problem of a capped list counted
 * as the problems it stands for. Filtering, copying or reordering the list keeps the count.
 */
export function problemTotal(problems: readonly Problem[]): number {
  let total = 0;
  for (const p of problems) total += notListed.get(p) ?? 1;
  return total;
}
