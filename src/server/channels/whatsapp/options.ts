/**
 * Options of the WhatsApp Cloud API channel, checked whole before anything connects: every problem
 * at once, each naming the option (or the fleet's JSON path), what was expected and what was found.
 * Secrets are never shown, only their length.
 */
import { validateFleet } from '../../../core/fleet-validate.js';
import { problem, type Problem } from '../../../core/problems.js';
import { integerProblem, secretProblem } from '../../lib/option-checks.js';
import { FleetIds } from './fleet-ids.js';
import { DEFAULT_MESSAGES_PER_SECOND, UPGRADED_MESSAGES_PER_SECOND } from './platform-changes.js';
import { DEFAULT_MAX_IN_FLIGHT_PER_NUMBER, MAX_IN_FLIGHT_PER_NUMBER } from './pacing-defaults.js';

/** Options of `createWhatsAppChannel`. */
export interface WhatsAppChannelOptions {
  /**
   * The fleet description (the same document the engine runs on), with the WhatsApp ids of every
   * number (`whatsapp.phoneNumberId`) and template (`whatsapp.language`, `whatsapp.name` when the
   * approved name differs from the template's `name`).
   */
  readonly fleet: unknown;
  /** Access token (a system user's) sent as `Authorization: Bearer …`. Never logged. */
  readonly accessToken: string;
  /** The app's secret: Meta signs every webhook with it (`X-Hub-Signature-256`). Never logged. */
  readonly appSecret: string;
  /** The Verify Token given in the App Dashboard's webhook settings, answered in the handshake. Never logged. */
  readonly verifyToken: string;
  /**
   * Origin of the Graph API.
   * @default 'https://graph.facebook.com'
   */
  readonly graphUrl?: string;
  /**
   * Graph API version in the path of every send.
   * @default 'v23.0'
   */
  readonly apiVersion?: string;
  /**
   * Path of the webhook endpoint on the server (the Callback URL is the server's origin and this).
   * @default '/whatsapp/webhook'
   */
  readonly webhookPath?: string;
  /**
   * Longest wait for the platform's answer to a send; past it the outcome is unknown and the
   * contact is retried (docs/channels.md, "Timeouts").
   * @default 10000
   */
  readonly requestTimeoutMs?: number;
  /**
   * Longest wait for a connection; a send that could not connect was not sent.
   * @default 5000
   */
  readonly connectTimeoutMs?: number;
  /**
   * Most sends of one number waiting for the platform at once: the ceiling of the number's
   * in-flight window. The window itself follows the number's rate times the platform's answer time
   * (with half again as headroom, at least 4), so a number upgraded to 1,000 messages/s at 200 ms
   * keeps about 300 at the platform; it starts at 64 (or this, when lower). Sends past the window
   * wait in the channel, in order (docs/channels.md, "Pacing").
   * @default 2000
   */
  readonly maxInFlightPerNumber?: number;
  /**
   * Messages a second of a number the fleet gives no `messagesPerSecond`: the platform's default
   * throughput. The channel tells the server (`numberDefaults`), which paces such numbers at it in
   * the engine; a throughput upgrade (the platform's THROUGHPUT_UPGRADE event) raises it to 1,000.
   * @default 80
   */
  readonly defaultMessagesPerSecond?: number;
  /**
   * Keep-alive connections to the Graph API, shared by every number. One connection carries one
   * send at a time, so this bounds the sends at the platform at once: give at least the messages
   * per second wanted times the platform's answer time (3,000/s x 0.15 s = 450).
   * @default 512
   */
  readonly connections?: number;
  /**
   * Sent messages remembered by their platform id and recipient, to find the message a reply
   * answers (statuses find theirs without it: the message id travels in `biz_opaque_callback_data`),
   * when the channel is attached without a memory of the server's (which the server bounds by its
   * own `maxTrackedMessages`, and keeps across restarts when durable). A reply to a message
   * forgotten gives no REPLIED and opens no attendance.
   * @default 500000
   */
  readonly maxTrackedMessages?: number;
  /**
   * Webhook events remembered to drop the ones Meta delivers again.
   * @default 100000
   */
  readonly maxWebhookKeys?: number;
  /**
   * Replies that are opt-outs (compared trimmed and case-insensitively; a template's quick-reply
   * button payload counts too).
   * @default ['STOP', 'SAIR', 'PARAR', 'CANCELAR', 'DESCADASTRAR', 'UNSUBSCRIBE']
   */
  readonly optOutKeywords?: readonly string[];
  /**
   * An attendance opened by a reply closes after this long without messages from the user. `false`:
   * the channel opens no attendances (a host with its own attendance system reports them).
   * @default 1800000 (30 minutes)
   */
  readonly attendanceIdleMs?: number | false;
  /**
   * Attendances open at once; past it the quietest closes early.
   * @default 100000
   */
  readonly maxOpenAttendances?: number;
  /**
   * Clock, in milliseconds (the engine's clock: pause ends are computed with it).
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * Told what the channel could not act on: a forged webhook, an event naming a template or number
   * the fleet does not have. Never given secrets. @default none
   */
  readonly onWarning?: (message: string, details: Readonly<Record<string, unknown>>) => void;
}

export interface ResolvedWhatsAppOptions {
  readonly ids: FleetIds;
  readonly accessToken: string;
  readonly appSecret: string;
  readonly verifyToken: string;
  readonly origin: string;
  /** `/v23.0/` (a prefix of every send's path, the graph URL's own path before it). */
  readonly pathPrefix: string;
  readonly webhookPath: string;
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxInFlightPerNumber: number;
  readonly defaultMessagesPerSecond: number;
  readonly connections: number;
  readonly maxTrackedMessages: number;
  readonly maxWebhookKeys: number;
  readonly optOutKeywords: ReadonlySet<string>;
  readonly attendanceIdleMs: number | false;
  readonly maxOpenAttendances: number;
  readonly now: () => number;
  readonly onWarning: (message: string, details: Readonly<Record<string, unknown>>) => void;
}

const WA = Symbol.for('sendpool.WhatsAppChannelError');

/** Options of the WhatsApp channel that can never work; nothing was started. */
export class WhatsAppChannelError extends Error {
  readonly [WA] = true;
  /** Every problem: the option (`accessToken`) or the fleet's path (`fleet.$.templates[0].whatsapp`). */
  readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[]) {
    super(`Invalid WhatsApp channel options: ${problems.map((p) => p.message).join('; ')}`);
    this.name = 'WhatsAppChannelError';
    this.problems = problems;
  }
}

/** True when `e` is a {@link WhatsAppChannelError}, from this copy of sendpool or another. */
export function isWhatsAppChannelError(e: unknown): e is WhatsAppChannelError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[WA] === true;
}

export const DEFAULT_OPT_OUT_KEYWORDS: readonly string[] = Object.freeze(['STOP', 'SAIR', 'PARAR', 'CANCELAR', 'DESCADASTRAR', 'UNSUBSCRIBE']);

/** Checks the options; throws {@link WhatsAppChannelError} with every problem. */
export function resolveWhatsAppOptions(o: WhatsAppChannelOptions): ResolvedWhatsAppOptions {
  const problems: Problem[] = [];
  const check = (found: Problem | undefined) => void (found && problems.push(found));
  check(secretProblem('accessToken', o.accessToken, 16));
  check(secretProblem('appSecret', o.appSecret, 16));
  check(secretProblem('verifyToken', o.verifyToken, 8));
  const graph = graphEndpoint(o, check);
  const webhookPath = o.webhookPath ?? '/whatsapp/webhook';
  if (!/^\/[A-Za-z0-9/_.-]*$/.test(webhookPath)) check(problem('webhookPath', 'a path such as "/whatsapp/webhook"', webhookPath));
  const limits = limitsOf(o, check);
  const optOutKeywords = optOutKeywordsOf(o, check);
  const ids = fleetIdsOf(o.fleet, check);
  if (problems.length > 0 || !ids) throw new WhatsAppChannelError(problems);
  return {
    ids,
    accessToken: o.accessToken,
    appSecret: o.appSecret,
    verifyToken: o.verifyToken,
    ...graph,
    webhookPath,
    ...limits,
    optOutKeywords,
    now: o.now ?? Date.now,
    onWarning: o.onWarning ?? (() => {}),
  };
}

/** Takes a problem found, if any. */
type Check = (found: Problem | undefined) => void;

/**
 * Where sends go: the Graph API's origin, and the path before each send's (the graph URL's own
 * path, then the API version).
 */
function graphEndpoint(o: WhatsAppChannelOptions, check: Check): Pick<ResolvedWhatsAppOptions, 'origin' | 'pathPrefix'> {
  const graphUrl = o.graphUrl ?? 'https://graph.facebook.com';
  let origin = '';
  let basePath = '';
  const url = URL.canParse(graphUrl) ? new URL(graphUrl) : undefined;
  if (url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.search && !url.hash) {
    origin = url.origin;
    basePath = url.pathname.replace(/\/+$/, '');
  } else {
    check(problem('graphUrl', 'an http or https URL without credentials, query or fragment, such as https://graph.facebook.com', graphUrl));
  }
  const apiVersion = o.apiVersion ?? 'v23.0';
  if (!/^v\d+\.\d+$/.test(apiVersion)) check(problem('apiVersion', 'a Graph API version such as "v23.0"', apiVersion));
  return { origin, pathPrefix: `${basePath}/${apiVersion}/` };
}

/** The channel's numeric limits: its waits, its pacing, its connections, what it remembers. */
type Limits = Pick<
  ResolvedWhatsAppOptions,
  'requestTimeoutMs' | 'connectTimeoutMs' | 'maxInFlightPerNumber' | 'defaultMessagesPerSecond' | 'connections' | 'maxTrackedMessages' | 'maxWebhookKeys' | 'maxOpenAttendances' | 'attendanceIdleMs'
>;

function limitsOf(o: WhatsAppChannelOptions, check: Check): Limits {
  const int = (name: keyof WhatsAppChannelOptions, fallback: number, min: number, max: number, unit = '') => {
    const value = o[name] ?? fallback;
    check(integerProblem(name, value, min, max, unit));
    return value as number;
  };
  return {
    requestTimeoutMs: int('requestTimeoutMs', 10_000, 1, 600_000, 'milliseconds'),
    connectTimeoutMs: int('connectTimeoutMs', 5_000, 1, 600_000, 'milliseconds'),
    maxInFlightPerNumber: int('maxInFlightPerNumber', DEFAULT_MAX_IN_FLIGHT_PER_NUMBER, 1, MAX_IN_FLIGHT_PER_NUMBER),
    defaultMessagesPerSecond: int('defaultMessagesPerSecond', DEFAULT_MESSAGES_PER_SECOND, 1, UPGRADED_MESSAGES_PER_SECOND, 'messages a second'),
    connections: int('connections', 512, 1, 100_000),
    maxTrackedMessages: int('maxTrackedMessages', 500_000, 1, 100_000_000),
    maxWebhookKeys: int('maxWebhookKeys', 100_000, 1, 100_000_000),
    maxOpenAttendances: int('maxOpenAttendances', 100_000, 1, 100_000_000),
    attendanceIdleMs: o.attendanceIdleMs === false ? false : int('attendanceIdleMs', 1_800_000, 1, 7 * 86_400_000, 'milliseconds'),
  };
}

/** The opt-out keywords as replies are compared with them: trimmed, in upper case (none when they are not valid). */
function optOutKeywordsOf(o: WhatsAppChannelOptions, check: Check): ReadonlySet<string> {
  const keywords = o.optOutKeywords ?? DEFAULT_OPT_OUT_KEYWORDS;
  if (!Array.isArray(keywords) || keywords.some((k) => typeof k !== 'string' || k.trim().length === 0)) {
    check(problem('optOutKeywords', 'an array of non-empty strings', keywords));
    return new Set();
  }
  return new Set((keywords as readonly string[]).map((k) => k.trim().toUpperCase()));
}

/** The fleet's WhatsApp ids, indexed; undefined when the fleet is not valid or its ids clash (the problems under `fleet.`). */
function fleetIdsOf(fleet: unknown, check: Check): FleetIds | undefined {
  const validation = validateFleet(fleet);
  if (!validation.ok) {
    for (const p of validation.problems) check(prefixed(p));
    return undefined;
  }
  const indexed = FleetIds.from(validation.fleet);
  if (indexed.ok) return indexed.ids;
  for (const p of indexed.problems) check(prefixed(p));
  return undefined;
}

function prefixed(p: Problem): Problem {
  const path = `fleet.${p.path}`;
  return { ...p, path, message: `${path}: expected ${p.expected}, got ${p.actual}` };
}
