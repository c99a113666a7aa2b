/**
 * A request intake cannot queue now (the backend's `refusal`: Redis came back without its queue,
 * or does not answer): a 503 with `Retry-After` instead of a 202 that would wait for the backend
 * without bound, or be written to a queue it just lost.
 */
import type { ErrorBody } from '../contract/response-schemas.js';
import { errorResponse, type HttpAnswer } from '../contract/responses.js';
import type { IntakeRefusal } from './ports/backend.js';

/** `Retry-After` of a refused request (s): about a Redis reset's handling, or a reconnection. */
export const REFUSAL_RETRY_AFTER_S = 5;

/** The 503 of a refusal; undefined when intake is open. */
export function intakeRefusal(why: IntakeRefusal | undefined): { answer: HttpAnswer<ErrorBody>; headers: Record<string, string> } | undefined {
  if (why === undefined) return undefined;
  const message =
    why === 'reset'
      ? 'Redis came back without its queue and this instance is writing again what it holds; nothing was accepted. Send it again shortly.'
      : 'Redis does not answer (a write is waiting to be retried); nothing was accepted. Send it again shortly.';
  return { answer: errorResponse('unavailable', [], message), headers: { 'retry-after': String(REFUSAL_RETRY_AFTER_S) } };
}
