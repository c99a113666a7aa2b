/**
 * Options of the SMPP channel, their defaults and their checks (every problem at once, each naming
 * the option; the password is never shown, only its length). Pure: the command line checks a
 * configuration with it before anything connects.
 */
import type { Clock } from '../../core/clock.js';
import { problem, type Problem } from '../../core/problems.js';
import { intProblem, resolveSmscs, smscListProblems, smscProblems, stringProblem, type ResolvedSmsc, type SmscOptions } from './smpp-smscs.js';
import { systemClock } from '../../runtime/system-clock.js';

/** A range of milliseconds for a back-off: the first wait, doubled on each failure up to the last. */
export interface BackoffRange {
  readonly minMs: number;
  readonly maxMs: number;
}

/** What the channel reports about its connection (for logs and metrics; never a credential). */
export type SmppEvent =
  | { readonly type: 'bound'; readonly address: string; readonly bind: string }
  | { readonly type: 'bind-failed'; readonly address: string; readonly bind: string; readonly reason: string }
  | { readonly type: 'disconnected'; readonly address: string; readonly bind: string; readonly reason: string; readonly requeued: number; readonly retryInMs: number }
  | { readonly type: 'throttled'; readonly reason: string; readonly backoffMs: number }
  | { readonly type: 'response-timeout'; readonly bind: string; readonly outstanding: number }
  | { readonly type: 'failover'; readonly from: string | null; readonly to: string | null };

/**
 * Options of {@link createSmppChannel}. The SMSC account (`host`, `systemId`, `password`, binds,
 * TPS: {@link SmscOptions}) is set at the top level, or several in `smscs` for a bind pool with
 * failover, each taking the top-level value of an option it does not set.
 */
export interface SmppChannelOptions extends SmscOptions {
  /**
   * Several SMSC accounts: SMS go to those of the lowest `priority` with a transmitting bind up
   * (spread over their binds), the others take over when none is; receipts and replies are read
   * on every receiving bind. @default one account, the top-level options
   */
  readonly smscs?: readonly SmscOptions[];
  /** `source_addr` of every SMS: the sender id (alphanumeric) or number. @example 'SENDPOOL' */
  readonly sourceAddr: string;
  /** `source_addr_ton`. @default 5 (alphanumeric) when `sourceAddr` has a letter, else 1 (international) */
  readonly sourceAddrTon?: number;
  /** `source_addr_npi`. @default 0 (unknown) for an alphanumeric `sourceAddr`, else 1 (ISDN) */
  readonly sourceAddrNpi?: number;
  /** `dest_addr_ton` (the phone has its country code). @default 1 (international) */
  readonly destAddrTon?: number;
  /** `dest_addr_npi`. @default 1 (ISDN, E.164) */
  readonly destAddrNpi?: number;
  /** Ask for delivery receipts (`registered_delivery` 1: final receipt). @default true */
  readonly deliveryReceipts?: boolean;
  /** Send `enquire_link` after this long without a PDU from the SMSC. @default 30_000 */
  readonly enquireLinkMs?: number;
  /** A PDU unanswered for this long means the connection is dead: it is dropped and made again. @default 30_000 */
  readonly responseTimeoutMs?: number;
  /** Connecting and binding must finish within this. @default 10_000 */
  readonly bindTimeoutMs?: number;
  /** Wait before connecting again after a drop or a failed bind (with jitter). @default { minMs: 250, maxMs: 30_000 } */
  readonly reconnectBackoff?: BackoffRange;
  /** Pause of sending after ESME_RTHROTTLED or ESME_RMSGQFUL. @default { minMs: 100, maxMs: 5_000 } */
  readonly throttleBackoff?: BackoffRange;
  /**
   * How long an SMS is tried, counted from its acceptance (`OutgoingSms.acceptedAt`, else from
   * when the channel is handed it): transient answers (`transientStatuses`), drops, timeouts and an
   * SMSC that cannot be reached are retried until it ends, and only then is the SMS answered
   * failed. Sent as `validity_period`, the time left at each try (a relative SMPP time), so the
   * SMSC stops trying when sendpool would. At most 99 days. @default 3_600_000 (1 hour)
   */
  readonly validityMs?: number;
  /**
   * SMPP `command_status` values that mean "not now" rather than "never": the part goes again
   * after `retryBackoff` (0x14 and 0x58 also pause all sending, `throttleBackoff`), within the
   * SMS's validity. Any other status but ESME_ROK and ESME_RINVBNDSTS (bind again, the part goes
   * again) fails the SMS at once, the status in its reason.
   * @default [0x08, 0x14, 0x58, 0x64] (ESME_RSYSERR, ESME_RMSGQFUL, ESME_RTHROTTLED, ESME_RX_T_APPN)
   */
  readonly transientStatuses?: readonly number[];
  /**
   * Wait before a part answered with a transient status goes again: doubled for each such answer
   * its SMS got, times a random 0.5–1. @default { minMs: 1_000, maxMs: 60_000 }
   */
  readonly retryBackoff?: BackoffRange;
  /**
   * An SMS accepted (every part) whose final delivery receipt has not come within this ends as
   * EXPIRED (its DLR callback, reason `SMPP: no delivery receipt within …`); a receipt after that
   * is ignored. Only with `deliveryReceipts`. @default 172_800_000 (48 hours)
   */
  readonly receiptTimeoutMs?: number;
  /**
   * The time validity and receipt waits are counted in (a manual clock in tests; the connection's
   * own timeouts use the system's). @default the system clock
   */
  readonly clock?: Clock;
  /**
   * SMSC message ids kept to match delivery receipts (oldest forgotten first), about 100 bytes
   * each: size it for the send rate times how late receipts come. With `maxTrackedReplies`, the
   * bound of the channel's own memory, used only when it is attached without one (the server lends
   * its own, bounded by its `maxTrackedMessages`). @default 1_000_000
   */
  readonly maxTrackedReceipts?: number;
  /** Phones kept to match replies (MO) to the last SMS sent to them (oldest forgotten first); see `maxTrackedReceipts`. @default 1_000_000 */
  readonly maxTrackedReplies?: number;
  /**
   * `interface_version` of the bind: 0x34 (SMPP 3.4, what sendpool speaks), 0x33 (3.3) or 0x50
   * (5.0) for an SMSC that asks for another; any octet 0x00–0xFF. @default 0x34
   */
  readonly interfaceVersion?: number;
  /**
   * `data_coding` of a GSM-7 text: 0 (the SMSC's default alphabet, GSM 03.38 octets) or 1 (IA5,
   * ASCII octets, for an SMSC that reads 0 as another alphabet). With 1, a text with a GSM-7
   * character outside ASCII (`é`, `£`, `€`…) is answered failed, not sent. UCS-2 is always 8.
   * @default 0
   */
  readonly gsm7DataCoding?: 0 | 1;
  /**
   * How a long SMS (more than one part) goes: `'udh'` a concatenation header in each part's
   * `short_message` (`esm_class` 0x40); `'sar'` the same parts without a header, joined by the TLVs
   * `sar_msg_ref_num`, `sar_total_segments`, `sar_segment_seqnum`; `'payload'` one `submit_sm` with
   * the whole text in the TLV `message_payload`, which the SMSC cuts. @default 'udh'
   */
  readonly concatenation?: 'udh' | 'sar' | 'payload';
  /**
   * PEM file of the certificate authorities the SMSC's certificate must chain to (with `tls`),
   * instead of Node's bundled ones. Read once when the channel is created. @default none (Node's CAs)
   */
  readonly tlsCaFile?: string;
  /** PEM file of the client certificate shown to an SMSC that asks for one (with `tlsKeyFile`). @default none */
  readonly tlsCertFile?: string;
  /** PEM file of the client certificate's private key (with `tlsCertFile`); its contents are never logged. @default none */
  readonly tlsKeyFile?: string;
  /**
   * Refuse an SMSC whose certificate does not chain to a trusted authority or does not name
   * `host`. Only for a test SMSC: false accepts any certificate. @default true
   */
  readonly tlsRejectUnauthorized?: boolean;
  /** Told of binds, drops and throttling. @default none */
  readonly onEvent?: (event: SmppEvent) => void;
}

/** The options with every default filled in; the accounts in `smscs`. */
export type ResolvedSmppOptions = Required<Omit<SmppChannelOptions, 'onEvent' | 'transientStatuses' | 'smscs' | keyof SmscOptions>> &
  Pick<SmppChannelOptions, 'onEvent'> & { readonly transientStatuses: ReadonlySet<number>; readonly smscs: readonly ResolvedSmsc[] };

export const SMPP_DEFAULTS = {
  window: 50,
  enquireLinkMs: 30_000,
  responseTimeoutMs: 30_000,
  bindTimeoutMs: 10_000,
  reconnectBackoff: { minMs: 250, maxMs: 30_000 },
  throttleBackoff: { minMs: 100, maxMs: 5_000 },
  validityMs: 3_600_000,
  transientStatuses: [0x08, 0x14, 0x58, 0x64],
  retryBackoff: { minMs: 1_000, maxMs: 60_000 },
  receiptTimeoutMs: 172_800_000,
  maxTrackedReceipts: 1_000_000,
  maxTrackedReplies: 1_000_000,
  interfaceVersion: 0x34,
  gsm7DataCoding: 0,
  concatenation: 'udh',
} as const;

const HOUR_MS = 3_600_000;
/** The longest relative SMPP time (smpp-codec.ts): 99 days. */
const MAX_VALIDITY_MS = 99 * 24 * HOUR_MS;

function backoffProblems(path: string, value: unknown): Problem[] {
  if (typeof value !== 'object' || value === null) return [problem(path, 'an object { minMs, maxMs }', value)];
  const v = value as Record<string, unknown>;
  const out = [intProblem(`${path}.minMs`, v['minMs'], 1, HOUR_MS), intProblem(`${path}.maxMs`, v['maxMs'], 1, HOUR_MS)].filter((p): p is Problem => p !== undefined);
  if (out.length === 0 && (v['maxMs'] as number) < (v['minMs'] as number)) out.push(problem(`${path}.maxMs`, `at least minMs (${String(v['minMs'])})`, v['maxMs']));
  return out;
}

/** Every problem of the options, each with its path under `prefix` (`smpp.window`). */
export function smppOptionProblems(options: unknown, prefix = 'smpp'): Problem[] {
  if (typeof options !== 'object' || options === null) return [problem(prefix, 'an object', options)];
  const o = options as Record<string, unknown>;
  const at = (k: string) => `${prefix}.${k}`;
  const found = [
    ...accountProblems(o, prefix),
    ...submitProblems(o, at),
    ...linkTimeoutProblems(o, at),
    ...lifetimeProblems(o, at),
    ...trackingProblems(o, at),
    ...encodingProblems(o, at),
    ...tlsProblems(o, at),
  ].filter((p): p is Problem => p !== undefined);
  for (const k of ['reconnectBackoff', 'throttleBackoff', 'retryBackoff']) if (o[k] !== undefined) found.push(...backoffProblems(at(k), o[k]));
  if (o['onEvent'] !== undefined && typeof o['onEvent'] !== 'function') found.push(problem(at('onEvent'), 'a function', o['onEvent']));
  return found;
}

/** The path of an option (`smpp.window`). */
type At = (option: string) => string;

/** The account: at the top level, or in `smscs` (the top level then only gives what they share). */
function accountProblems(o: Record<string, unknown>, prefix: string): Problem[] {
  if (o['smscs'] === undefined) return smscProblems(o, prefix);
  return [...smscProblems(o, prefix, { host: '', systemId: '', password: '' }), ...smscListProblems(o['smscs'], prefix, o)];
}

/** What every `submit_sm` says of its addresses, and whether it asks for a receipt. */
function submitProblems(o: Record<string, unknown>, at: At): (Problem | undefined)[] {
  const found = [stringProblem(at('sourceAddr'), o['sourceAddr'], 1, 20)];
  for (const k of ['sourceAddrTon', 'sourceAddrNpi', 'destAddrTon', 'destAddrNpi']) if (o[k] !== undefined) found.push(intProblem(at(k), o[k], 0, 255));
  if (o['deliveryReceipts'] !== undefined && typeof o['deliveryReceipts'] !== 'boolean') found.push(problem(at('deliveryReceipts'), 'true or false', o['deliveryReceipts']));
  return found;
}

/** The connection's own waits: keep-alive, a PDU's answer, the bind. */
function linkTimeoutProblems(o: Record<string, unknown>, at: At): (Problem | undefined)[] {
  return ['enquireLinkMs', 'responseTimeoutMs', 'bindTimeoutMs'].filter((k) => o[k] !== undefined).map((k) => intProblem(at(k), o[k], 1, HOUR_MS));
}

/**
 * How long an SMS is tried and its receipt waited for, which answers are tried again, and the
 * clock those times are counted in.
 */
function lifetimeProblems(o: Record<string, unknown>, at: At): (Problem | undefined)[] {
  const found: (Problem | undefined)[] = [];
  for (const k of ['validityMs', 'receiptTimeoutMs']) if (o[k] !== undefined) found.push(intProblem(at(k), o[k], 1_000, MAX_VALIDITY_MS));
  if (o['sendTimeoutMs'] !== undefined) found.push(problem(at('sendTimeoutMs'), 'no such option (replaced by validityMs: an SMS is tried until its validity ends)', o['sendTimeoutMs']));
  const transient = o['transientStatuses'];
  if (transient !== undefined) {
    if (!Array.isArray(transient)) found.push(problem(at('transientStatuses'), 'an array of SMPP command_status values', transient));
    else
      transient.forEach((v: unknown, i) =>
        found.push(v === 0 ? problem(`${at('transientStatuses')}[${i}]`, 'a status other than ESME_ROK (0)', v) : intProblem(`${at('transientStatuses')}[${i}]`, v, 1, 0xffffffff)),
      );
  }
  const clock: unknown = o['clock'];
  if (clock !== undefined && (typeof clock !== 'object' || clock === null || typeof (clock as Record<string, unknown>)['now'] !== 'function'))
    found.push(problem(at('clock'), 'an object with now()', clock));
  return found;
}

/** The bounds of the channel's own memory of receipts and replies. */
function trackingProblems(o: Record<string, unknown>, at: At): (Problem | undefined)[] {
  return ['maxTrackedReceipts', 'maxTrackedReplies'].filter((k) => o[k] !== undefined).map((k) => intProblem(at(k), o[k], 1, 100_000_000));
}

/** How the bind and each SMS are written: the SMPP version, the GSM-7 alphabet, a long SMS's parts. */
function encodingProblems(o: Record<string, unknown>, at: At): (Problem | undefined)[] {
  const found: (Problem | undefined)[] = [];
  if (o['interfaceVersion'] !== undefined) found.push(intProblem(at('interfaceVersion'), o['interfaceVersion'], 0, 255));
  if (o['gsm7DataCoding'] !== undefined && o['gsm7DataCoding'] !== 0 && o['gsm7DataCoding'] !== 1)
    found.push(problem(at('gsm7DataCoding'), '0 (SMSC default alphabet) or 1 (IA5/ASCII)', o['gsm7DataCoding']));
  if (o['concatenation'] !== undefined && !['udh', 'sar', 'payload'].includes(o['concatenation'] as string)) found.push(problem(at('concatenation'), "'udh', 'sar' or 'payload'", o['concatenation']));
  return found;
}

/** The TLS files (only where an account connects over TLS; a client certificate with its key) and the certificate check. */
function tlsProblems(o: Record<string, unknown>, at: At): (Problem | undefined)[] {
  const found: (Problem | undefined)[] = [];
  for (const k of ['tlsCaFile', 'tlsCertFile', 'tlsKeyFile']) {
    if (o[k] === undefined) continue;
    found.push(stringProblem(at(k), o[k], 1, 4096));
    if (!anyTls(o)) found.push(problem(at(k), 'a file only with tls: true (at the top level or for an account in smscs)', o[k]));
  }
  if ((o['tlsCertFile'] === undefined) !== (o['tlsKeyFile'] === undefined)) {
    const [given, missing] = o['tlsCertFile'] === undefined ? ['tlsKeyFile', 'tlsCertFile'] : ['tlsCertFile', 'tlsKeyFile'];
    found.push(problem(at(missing), `a file with ${given} (a client certificate needs both)`, undefined));
  }
  if (o['tlsRejectUnauthorized'] !== undefined && typeof o['tlsRejectUnauthorized'] !== 'boolean') found.push(problem(at('tlsRejectUnauthorized'), 'true or false', o['tlsRejectUnauthorized']));
  return found;
}

/** Some account connects over TLS: the top level, or an entry of `smscs`. */
function anyTls(o: Record<string, unknown>): boolean {
  const smscs: unknown = o['smscs'];
  return o['tls'] === true || (Array.isArray(smscs) && smscs.some((e: unknown) => typeof e === 'object' && e !== null && (e as Record<string, unknown>)['tls'] === true));
}

/** Fills in the defaults (the options were checked). */
export function resolveSmppOptions(o: SmppChannelOptions): ResolvedSmppOptions {
  return {
    smscs: resolveSmscs(o, SMPP_DEFAULTS.window),
    ...resolveSubmit(o),
    ...resolveLinkTimeouts(o),
    ...resolveLifetime(o),
    maxTrackedReceipts: o.maxTrackedReceipts ?? SMPP_DEFAULTS.maxTrackedReceipts,
    maxTrackedReplies: o.maxTrackedReplies ?? SMPP_DEFAULTS.maxTrackedReplies,
    ...resolveEncoding(o),
    ...resolveTls(o),
    onEvent: o.onEvent,
  };
}

/** The addresses every `submit_sm` carries: an alphanumeric sender id is TON 5 / NPI 0, a number 1 / 1. */
function resolveSubmit(o: SmppChannelOptions): Pick<ResolvedSmppOptions, 'sourceAddr' | 'sourceAddrTon' | 'sourceAddrNpi' | 'destAddrTon' | 'destAddrNpi' | 'deliveryReceipts'> {
  const alphanumeric = /[^0-9+]/.test(o.sourceAddr);
  return {
    sourceAddr: o.sourceAddr,
    sourceAddrTon: o.sourceAddrTon ?? (alphanumeric ? 5 : 1),
    sourceAddrNpi: o.sourceAddrNpi ?? (alphanumeric ? 0 : 1),
    destAddrTon: o.destAddrTon ?? 1,
    destAddrNpi: o.destAddrNpi ?? 1,
    deliveryReceipts: o.deliveryReceipts ?? true,
  };
}

function resolveLinkTimeouts(o: SmppChannelOptions): Pick<ResolvedSmppOptions, 'enquireLinkMs' | 'responseTimeoutMs' | 'bindTimeoutMs' | 'reconnectBackoff' | 'throttleBackoff'> {
  return {
    enquireLinkMs: o.enquireLinkMs ?? SMPP_DEFAULTS.enquireLinkMs,
    responseTimeoutMs: o.responseTimeoutMs ?? SMPP_DEFAULTS.responseTimeoutMs,
    bindTimeoutMs: o.bindTimeoutMs ?? SMPP_DEFAULTS.bindTimeoutMs,
    reconnectBackoff: o.reconnectBackoff ?? SMPP_DEFAULTS.reconnectBackoff,
    throttleBackoff: o.throttleBackoff ?? SMPP_DEFAULTS.throttleBackoff,
  };
}

function resolveLifetime(o: SmppChannelOptions): Pick<ResolvedSmppOptions, 'validityMs' | 'transientStatuses' | 'retryBackoff' | 'receiptTimeoutMs' | 'clock'> {
  return {
    validityMs: o.validityMs ?? SMPP_DEFAULTS.validityMs,
    transientStatuses: new Set(o.transientStatuses ?? SMPP_DEFAULTS.transientStatuses),
    retryBackoff: o.retryBackoff ?? SMPP_DEFAULTS.retryBackoff,
    receiptTimeoutMs: o.receiptTimeoutMs ?? SMPP_DEFAULTS.receiptTimeoutMs,
    clock: o.clock ?? systemClock,
  };
}

function resolveEncoding(o: SmppChannelOptions): Pick<ResolvedSmppOptions, 'interfaceVersion' | 'gsm7DataCoding' | 'concatenation'> {
  return {
    interfaceVersion: o.interfaceVersion ?? SMPP_DEFAULTS.interfaceVersion,
    gsm7DataCoding: o.gsm7DataCoding ?? SMPP_DEFAULTS.gsm7DataCoding,
    concatenation: o.concatenation ?? SMPP_DEFAULTS.concatenation,
  };
}

/** No file is '' (Node's CAs, no client certificate). */
function resolveTls(o: SmppChannelOptions): Pick<ResolvedSmppOptions, 'tlsCaFile' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsRejectUnauthorized'> {
  return {
    tlsCaFile: o.tlsCaFile ?? '',
    tlsCertFile: o.tlsCertFile ?? '',
    tlsKeyFile: o.tlsKeyFile ?? '',
    tlsRejectUnauthorized: o.tlsRejectUnauthorized ?? true,
  };
}
