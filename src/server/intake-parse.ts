/**
 * The contract check of a POST /messenger/messages/ body before `intakeSend`: a large request's
 * contacts are checked in slices (./slices.ts), so other requests are answered in between, then
 * screened in slices (blocklist, campaign, already sent) against this instance's sets. Only checking
 * happens here; nothing is queued until `intakeSend` takes the parsed request and, in one piece,
 * checks the intake bound and submits. So a request stays all or nothing, and two large requests
 * checked side by side are bounded as if they had come one after the other. The screening is kept
 * with the version of the sets it read: `intakeSend` screens again only if they changed meanwhile.
 */
import { parseSendRequest, startSendRequest } from '../contract/parse-send-request.js';
import { leaveBodyGate } from './body-parser.js';
import type { ServerContext } from './context.js';
import { type PreparedSend, screeningVersion, sendRequestOptions, startRequestScreening } from './intake.js';
import { runInSlices } from './slices.js';

/**
 * Requests of at most this many contacts are checked at once: about 2 ms for 1,000 on the reference
 * machine, as long as a slice.
 */
export const SLICED_CONTACTS_MIN = 1000;

/** Contacts checked per unit of a slice: about 0.5 ms of work. */
const UNIT_CONTACTS = 250;

/**
 * Parses a send body for `intakeSend`: at once when small, in slices when large. A large body's
 * place among the large requests (body-parser.ts) is given back once it is checked: the intake
 * runs in the same turn, and the next large request starts decoding. On Redis the phones are
 * reserved after this (features/messenger.ts), so the screening waits for `intakeSend`.
 */
export async function parseSendInSlices(ctx: ServerContext, companyId: number, body: unknown): Promise<PreparedSend> {
  try {
    const options = sendRequestOptions(ctx, companyId);
    if (contactCount(body) <= SLICED_CONTACTS_MIN) return { parsed: parseSendRequest(body, options) };
    const parse = startSendRequest(body, options);
    await runInSlices(() => parse.step(UNIT_CONTACTS));
    const parsed = parse.result();
    if (!parsed.ok || !ctx.backend.screensWhileParsing) return { parsed };
    // The version before the first step (after the views are read: reading may drop buckets past
    // the window): a change during the steps makes intakeSend screen again.
    const now = ctx.clock.now();
    const screening = startRequestScreening(ctx, companyId, parsed.value, now);
    const version = screeningVersion(ctx, now);
    await runInSlices(() => screening.step(UNIT_CONTACTS));
    return { parsed, prescreen: { version, screened: screening.result() } };
  } finally {
    leaveBodyGate(body);
  }
}

/** Length of the body's `contacts` when it is an array, else 0 (never throws: the parser says what is wrong). */
function contactCount(body: unknown): number {
  try {
    const contacts = typeof body === 'object' && body !== null ? (body as { contacts?: unknown }).contacts : undefined;
    return Array.isArray(contacts) ? contacts.length : 0;
  } catch {
    return 0;
  }
}
