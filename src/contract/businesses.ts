/**
 * The GET /messenger/businesses/ response: a check for hosts and clients that want to be sure what
 * they send or receive follows the contract (e.g. the engine's output in a test, or a proxy).
 */
import { type Problem, problem } from '../core/problems.js';
import { type BusinessesResponse, BusinessesResponseSchema } from './business-schema.js';
import type { ParseResult } from './check.js';
import { schemaProblems } from './schema-check.js';

/** Checks a GET /messenger/businesses/ response body; extra keys are allowed (spec 2.2 annotations). */
export function parseBusinessesResponse(body: unknown): ParseResult<BusinessesResponse, Problem> {
  try {
    const problems: Problem[] = [];
    for (const p of schemaProblems(BusinessesResponseSchema, body)) problems.push(p);
    return problems.length > 0 ? { ok: false, problems } : { ok: true, value: body as BusinessesResponse };
  } catch {
    return { ok: false, problems: [problem('$', 'a JSON array of businesses', body)] };
  }
}
