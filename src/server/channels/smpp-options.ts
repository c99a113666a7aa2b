/**
 * Options of the SMPP channel, their defaults and their checks (every problem at once, each naming
 * the option; the password is never shown, only its length). Pure: the command line checks a
 * configuration with it before anything connects.
 */
import { problem, type Problem } from '../../core/problems.js';

/** A range of milliseconds for a back-off: the first wait, doubled on each failure up to the last. */
export interface BackoffRange {
  readonly minMs: number;
  readonly maxMs: number;
}

/** What the channel reports about its connection (for logs and metrics; never a credential). */
export type SmppEvent =
  | { readonly type: 'bound'; readonly address: string }
  | { readonly type: 'bind-failed'; readonly address: string; readonly reason: string }
  | { readonly type: 'disconnected'; readonly address: string; readonly reason: string; readonly requeued: number; readonly retryInMs: number }
  | { readonly type: 'throttled'; readonly reason: string; readonly backoffMs: number }
  | { readonly type: 'response-timeout'; readonly outstanding: number };

/** Options of {@link createSmppChannel}. */
export interface SmppChannelOptions {
  /** Host of the SMSC. @example 'smsc.example.net' */
  readonly host: string;
  /** Port of the SMSC. @default 2775 (3550 with `tls`) */
  readonly port?: number;
  /** Connect over TLS. @default false */
  readonly tls?: boolean;
  /** `system_id` of the bind (the account). */
  readonly systemId: string;
  /** `password` of the bind (at most 8 characters in SMPP 3.4). Never logged. */
  readonly password: string;
  /** `system_type` of the bind. @default '' */
  readonly systemType?: string;
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
  /** Most `submit_sm` sent and not yet answered at once (the window). @default 50 */
  readonly window?: number;
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
   * An SMS the SMSC has not accepted (every part) within this is answered failed (`sendSms`
   * resolves `{ status: 'failed' }`). @default 120_000
   */
  readonly sendTimeoutMs?: number;
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

/** The options with every default filled in. */
export type ResolvedSmppOptions = Required<Omit<SmppChannelOptions, 'onEvent'>> & Pick<SmppChannelOptions, 'onEvent'>;

export const SMPP_DEFAULTS = {
  window: 50,
  enquireLinkMs: 30_000,
  responseTimeoutMs: 30_000,
  bindTimeoutMs: 10_000,
  reconnectBackoff: { minMs: 250, maxMs: 30_000 },
  throttleBackoff: { minMs: 100, maxMs: 5_000 },
  sendTimeoutMs: 120_000,
  maxTrackedReceipts: 1_000_000,
  maxTrackedReplies: 1_000_000,
  interfaceVersion: 0x34,
  gsm7DataCoding: 0,
  concatenation: 'udh',
} as const;

const HOUR_MS = 3_600_000;

function intProblem(path: string, value: unknown, min: number, max: number): Problem | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return undefined;
  return problem(path, `an integer from ${min} to ${max}`, value);
}

function stringProblem(path: string, value: unknown, min: number, max: number, pattern?: RegExp, patternText?: string): Problem | undefined {
  const expected = `a string of ${min} to ${max} characters${patternText ? ` ${patternText}` : ''}`;
  if (typeof value !== 'string' || value.length < min || value.length > max || (pattern && !pattern.test(value))) return problem(path, expected, value);
  return undefined;
}

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
  const found: (Problem | undefined)[] = [
    stringProblem(at('host'), o['host'], 1, 253, /^[^\s/]+$/, 'without spaces or slashes'),
    stringProblem(at('systemId'), o['systemId'], 1, 15, undefined, '(SMPP 3.4: at most 15)'),
    stringProblem(at('sourceAddr'), o['sourceAddr'], 1, 20),
  ];
  // The password: its length only, never its value.
  const password = o['password'];
  if (typeof password !== 'string' || password.length > 64) {
    const actual = typeof password === 'string' ? `a string of ${password.length} characters` : password === undefined ? 'missing' : typeof password;
    found.push({ path: at('password'), expected: 'a string of 0 to 64 characters', actual, message: `${at('password')}: expected a string of 0 to 64 characters, got ${actual}` });
  }
  if (o['port'] !== undefined) found.push(intProblem(at('port'), o['port'], 1, 65_535));
  if (o['tls'] !== undefined && typeof o['tls'] !== 'boolean') found.push(problem(at('tls'), 'true or false', o['tls']));
  if (o['systemType'] !== undefined) found.push(stringProblem(at('systemType'), o['systemType'], 0, 12));
  for (const k of ['sourceAddrTon', 'sourceAddrNpi', 'destAddrTon', 'destAddrNpi']) if (o[k] !== undefined) found.push(intProblem(at(k), o[k], 0, 255));
  if (o['deliveryReceipts'] !== undefined && typeof o['deliveryReceipts'] !== 'boolean') found.push(problem(at('deliveryReceipts'), 'true or false', o['deliveryReceipts']));
  if (o['window'] !== undefined) found.push(intProblem(at('window'), o['window'], 1, 10_000));
  for (const k of ['enquireLinkMs', 'responseTimeoutMs', 'bindTimeoutMs', 'sendTimeoutMs']) if (o[k] !== undefined) found.push(intProblem(at(k), o[k], 1, HOUR_MS));
  for (const k of ['maxTrackedReceipts', 'maxTrackedReplies']) if (o[k] !== undefined) found.push(intProblem(at(k), o[k], 1, 100_000_000));
  if (o['interfaceVersion'] !== undefined) found.push(intProblem(at('interfaceVersion'), o['interfaceVersion'], 0, 255));
  if (o['gsm7DataCoding'] !== undefined && o['gsm7DataCoding'] !== 0 && o['gsm7DataCoding'] !== 1)
    found.push(problem(at('gsm7DataCoding'), '0 (SMSC default alphabet) or 1 (IA5/ASCII)', o['gsm7DataCoding']));
  if (o['concatenation'] !== undefined && !['udh', 'sar', 'payload'].includes(o['concatenation'] as string)) found.push(problem(at('concatenation'), "'udh', 'sar' or 'payload'", o['concatenation']));
  for (const k of ['tlsCaFile', 'tlsCertFile', 'tlsKeyFile']) {
    if (o[k] === undefined) continue;
    found.push(stringProblem(at(k), o[k], 1, 4096));
    if (o['tls'] !== true) found.push(problem(at(k), 'a file only with tls: true', o[k]));
  }
  if ((o['tlsCertFile'] === undefined) !== (o['tlsKeyFile'] === undefined)) {
    const [given, missing] = o['tlsCertFile'] === undefined ? ['tlsKeyFile', 'tlsCertFile'] : ['tlsCertFile', 'tlsKeyFile'];
    found.push(problem(at(missing), `a file with ${given} (a client certificate needs both)`, undefined));
  }
  if (o['tlsRejectUnauthorized'] !== undefined && typeof o['tlsRejectUnauthorized'] !== 'boolean') found.push(problem(at('tlsRejectUnauthorized'), 'true or false', o['tlsRejectUnauthorized']));
  const out = found.filter((p): p is Problem => p !== undefined);
  for (const k of ['reconnectBackoff', 'throttleBackoff']) if (o[k] !== undefined) out.push(...backoffProblems(at(k), o[k]));
  if (o['onEvent'] !== undefined && typeof o['onEvent'] !== 'function') out.push(problem(at('onEvent'), 'a function', o['onEvent']));
  return out;
}

/** Fills in the defaults (the options were checked). */
export function resolveSmppOptions(o: SmppChannelOptions): ResolvedSmppOptions {
  const alphanumeric = /[^0-9+]/.test(o.sourceAddr);
  return {
    host: o.host,
    port: o.port ?? (o.tls ? 3550 : 2775),
    tls: o.tls ?? false,
    systemId: o.systemId,
    password: o.password,
    systemType: o.systemType ?? '',
    sourceAddr: o.sourceAddr,
    sourceAddrTon: o.sourceAddrTon ?? (alphanumeric ? 5 : 1),
    sourceAddrNpi: o.sourceAddrNpi ?? (alphanumeric ? 0 : 1),
    destAddrTon: o.destAddrTon ?? 1,
    destAddrNpi: o.destAddrNpi ?? 1,
    deliveryReceipts: o.deliveryReceipts ?? true,
    window: o.window ?? SMPP_DEFAULTS.window,
    enquireLinkMs: o.enquireLinkMs ?? SMPP_DEFAULTS.enquireLinkMs,
    responseTimeoutMs: o.responseTimeoutMs ?? SMPP_DEFAULTS.responseTimeoutMs,
    bindTimeoutMs: o.bindTimeoutMs ?? SMPP_DEFAULTS.bindTimeoutMs,
    reconnectBackoff: o.reconnectBackoff ?? SMPP_DEFAULTS.reconnectBackoff,
    throttleBackoff: o.throttleBackoff ?? SMPP_DEFAULTS.throttleBackoff,
    sendTimeoutMs: o.sendTimeoutMs ?? SMPP_DEFAULTS.sendTimeoutMs,
    maxTrackedReceipts: o.maxTrackedReceipts ?? SMPP_DEFAULTS.maxTrackedReceipts,
    maxTrackedReplies: o.maxTrackedReplies ?? SMPP_DEFAULTS.maxTrackedReplies,
    interfaceVersion: o.interfaceVersion ?? SMPP_DEFAULTS.interfaceVersion,
    gsm7DataCoding: o.gsm7DataCoding ?? SMPP_DEFAULTS.gsm7DataCoding,
    concatenation: o.concatenation ?? SMPP_DEFAULTS.concatenation,
    tlsCaFile: o.tlsCaFile ?? '',
    tlsCertFile: o.tlsCertFile ?? '',
    tlsKeyFile: o.tlsKeyFile ?? '',
    tlsRejectUnauthorized: o.tlsRejectUnauthorized ?? true,
    onEvent: o.onEvent,
  };
}
