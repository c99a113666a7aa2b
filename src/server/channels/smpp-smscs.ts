/**
 * The SMSC accounts of an SMPP channel's bind pool: where each connects, how many binds it keeps
 * (transceivers, or transmitters and receivers), its priority for failover and its rate cap (TPS).
 * One account is the top-level options themselves; `smscs` lists several, each taking the
 * top-level value of any option it does not set. Pure: checked and resolved before anything
 * connects.
 */
import { problem, type Problem } from '../../core/problems.js';

/** How an account binds: transceivers (send and receive on each), or transmitters plus receivers. */
export type SmppBindMode = 'transceiver' | 'split';

/** The options an SMSC account sets (in `smscs`, or at the top level for the only one). */
export interface SmscOptions {
  /** Its name in logs, events and stats; a receipt names a message id within its SMSC. @default `<host>:<port>` */
  readonly name?: string;
  /** Host of the SMSC. @example 'smsc.example.net' */
  readonly host?: string;
  /** Port of the SMSC. @default 2775 (3550 with `tls`) */
  readonly port?: number;
  /** Connect over TLS. @default false */
  readonly tls?: boolean;
  /** `system_id` of the binds (the account). */
  readonly systemId?: string;
  /** `password` of the binds (at most 8 characters in SMPP 3.4). Never logged. */
  readonly password?: string;
  /** `system_type` of the binds. @default '' */
  readonly systemType?: string;
  /**
   * Failover order: SMS go to the accounts of the lowest priority that has a transmitting bind up;
   * the others stay bound, take over when it has none, and give back when it has one again.
   * @default 0
   */
  readonly priority?: number;
  /** Binds that send (transceivers, or transmitters with `bindMode: 'split'`). @default 1 */
  readonly binds?: number;
  /** `'transceiver'`: each bind sends and receives; `'split'`: `binds` transmitters and `receiverBinds` receivers. @default 'transceiver' */
  readonly bindMode?: SmppBindMode;
  /** Receiver binds with `bindMode: 'split'`. @default 1 */
  readonly receiverBinds?: number;
  /**
   * Most `submit_sm` a second over this account, all its binds together, enforced before sending
   * (a token bucket holding a tenth of a second's worth). @default none: only the window and the
   * SMSC's throttling answers limit the rate
   */
  readonly tps?: number;
  /** Most `submit_sm` unanswered at once on each of its binds. @default 50 */
  readonly window?: number;
}

/** Options an entry of `smscs` may set. */
export const SMSC_KEYS: readonly (keyof SmscOptions)[] = ['name', 'host', 'port', 'tls', 'systemId', 'password', 'systemType', 'priority', 'binds', 'bindMode', 'receiverBinds', 'tps', 'window'];

/** Most binds an account may keep of each kind. */
export const MAX_BINDS = 64;

/** An integer from `min` to `max`, or the problem. */
export function intProblem(path: string, value: unknown, min: number, max: number): Problem | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return undefined;
  return problem(path, `an integer from ${min} to ${max}`, value);
}

/** A string of `min` to `max` characters (matching `pattern`), or the problem. */
export function stringProblem(path: string, value: unknown, min: number, max: number, pattern?: RegExp, patternText?: string): Problem | undefined {
  const expected = `a string of ${min} to ${max} characters${patternText ? ` ${patternText}` : ''}`;
  if (typeof value !== 'string' || value.length < min || value.length > max || (pattern && !pattern.test(value))) return problem(path, expected, value);
  return undefined;
}

/**
 * Problems of an account's options at `prefix` (`smpp`, `smpp.smscs[1]`). `inherited` holds the
 * top-level values an entry falls back on: a required option is missing only when neither sets it.
 */
export function smscProblems(o: Record<string, unknown>, prefix: string, inherited: Record<string, unknown> = {}): Problem[] {
  const at = (k: string) => `${prefix}.${k}`;
  return [...loginProblems(o, prefix, inherited), ...bindProblems(o, at)].filter((p): p is Problem => p !== undefined);
}

/** The login every bind of the account makes (host, `system_id`, password): required here or inherited. */
function loginProblems(o: Record<string, unknown>, prefix: string, inherited: Record<string, unknown>): (Problem | undefined)[] {
  const at = (k: string) => `${prefix}.${k}`;
  const nowhere = prefix === 'smpp' ? '' : ' (nor is it set at the top level)';
  const required = (k: string, check: (v: unknown) => Problem | undefined): Problem | undefined => {
    if (o[k] !== undefined) return check(o[k]);
    if (inherited[k] !== undefined) return undefined;
    const p = check(undefined);
    return p && { ...p, message: p.message + nowhere };
  };
  return [
    required('host', (v) => stringProblem(at('host'), v, 1, 253, /^[^\s/]+$/, 'without spaces or slashes')),
    required('systemId', (v) => stringProblem(at('systemId'), v, 1, 15, undefined, '(SMPP 3.4: at most 15)')),
    passwordProblem(o['password'], inherited['password'] !== undefined, at('password'), nowhere),
  ];
}

/** The password: its length only, never its value. `inherited`: the top level sets one. */
function passwordProblem(password: unknown, inherited: boolean, path: string, nowhere: string): Problem | undefined {
  const has = password !== undefined || inherited;
  if (has && (password === undefined || (typeof password === 'string' && password.length <= 64))) return undefined;
  const actual = typeof password === 'string' ? `a string of ${password.length} characters` : password === undefined ? 'missing' : typeof password;
  return { path, expected: 'a string of 0 to 64 characters', actual, message: `${path}: expected a string of 0 to 64 characters, got ${actual}${password === undefined ? nowhere : ''}` };
}

/** How the account binds and sends: its name, where it connects, its binds, priority and rate. */
function bindProblems(o: Record<string, unknown>, at: (k: string) => string): (Problem | undefined)[] {
  const found: (Problem | undefined)[] = [];
  if (o['name'] !== undefined) found.push(stringProblem(at('name'), o['name'], 1, 64, /^[^\s/]+$/, 'without spaces or slashes'));
  if (o['port'] !== undefined) found.push(intProblem(at('port'), o['port'], 1, 65_535));
  if (o['tls'] !== undefined && typeof o['tls'] !== 'boolean') found.push(problem(at('tls'), 'true or false', o['tls']));
  if (o['systemType'] !== undefined) found.push(stringProblem(at('systemType'), o['systemType'], 0, 12));
  if (o['priority'] !== undefined) found.push(intProblem(at('priority'), o['priority'], 0, 1_000));
  for (const k of ['binds', 'receiverBinds']) if (o[k] !== undefined) found.push(intProblem(at(k), o[k], 1, MAX_BINDS));
  if (o['bindMode'] !== undefined && o['bindMode'] !== 'transceiver' && o['bindMode'] !== 'split') found.push(problem(at('bindMode'), "'transceiver' or 'split'", o['bindMode']));
  if (o['tps'] !== undefined) found.push(intProblem(at('tps'), o['tps'], 1, 1_000_000));
  if (o['window'] !== undefined) found.push(intProblem(at('window'), o['window'], 1, 10_000));
  return found;
}

/** Problems of `smscs`: an array of accounts, names not repeated. */
export function smscListProblems(list: unknown, prefix: string, top: Record<string, unknown>): Problem[] {
  const at = `${prefix}.smscs`;
  if (!Array.isArray(list) || list.length === 0 || list.length > 16) return [problem(at, 'an array of 1 to 16 SMSC accounts', list)];
  const out: Problem[] = [];
  const names = new Map<string, number>();
  list.forEach((entry: unknown, i) => {
    const path = `${at}[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return void out.push(problem(path, 'an object of SMSC account options', entry));
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) if (!(SMSC_KEYS as readonly string[]).includes(k)) out.push(problem(`${path}.${k}`, `one of ${SMSC_KEYS.join(', ')}`, e[k]));
    out.push(...smscProblems(e, path, top));
    const name = smscName(e, top);
    const seen = names.get(name);
    if (seen !== undefined) out.push(problem(`${path}.name`, `a name no other account has (smscs[${seen}] is ${JSON.stringify(name)})`, e['name']));
    names.set(name, i);
  });
  return out;
}

/** An account's name: given, else `<host>:<port>`. */
function smscName(e: Record<string, unknown>, top: Record<string, unknown>): string {
  if (typeof e['name'] === 'string') return e['name'];
  const tls = (e['tls'] ?? top['tls']) === true;
  const port: unknown = e['port'] ?? top['port'] ?? (tls ? 3550 : 2775);
  return `${String(e['host'] ?? top['host'])}:${typeof port === 'number' ? port : '?'}`;
}

/** An account with every default filled in. */
export interface ResolvedSmsc {
  readonly name: string;
  /**
   * What the keys of its message ids start with in the channel memory: '' for the login of the
   * first account (so a single SMSC's keys stay as they were), `<systemId>@<host>:<port>/` for
   * another login, whose SMSC may give the same ids. Accounts of one login share it: the SMSC may
   * deliver a receipt on any bind of the login.
   */
  readonly idScope: string;
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly systemId: string;
  readonly password: string;
  readonly systemType: string;
  readonly priority: number;
  readonly binds: number;
  readonly bindMode: SmppBindMode;
  readonly receiverBinds: number;
  /** 0: no cap. */
  readonly tps: number;
  readonly window: number;
}

/** The accounts of the options (checked): `smscs`, or the top level as the only one. */
export function resolveSmscs(top: SmscOptions & { readonly smscs?: readonly SmscOptions[] }, defaultWindow: number): ResolvedSmsc[] {
  const entries = top.smscs ?? [{}];
  let firstLogin: string | undefined;
  return entries.map((e) => {
    const pick = <K extends keyof SmscOptions>(k: K): SmscOptions[K] => e[k] ?? top[k];
    const tls = pick('tls') ?? false;
    const host = pick('host')!;
    const port = pick('port') ?? (tls ? 3550 : 2775);
    const name = e.name ?? (top.smscs ? undefined : top.name) ?? `${host}:${port}`;
    const login = `${pick('systemId')!}@${host}:${port}`;
    firstLogin ??= login;
    return {
      name,
      idScope: login === firstLogin ? '' : `${login}/`,
      host,
      port,
      tls,
      systemId: pick('systemId')!,
      password: pick('password')!,
      systemType: pick('systemType') ?? '',
      priority: pick('priority') ?? 0,
      binds: pick('binds') ?? 1,
      bindMode: pick('bindMode') ?? 'transceiver',
      receiverBinds: pick('receiverBinds') ?? 1,
      tps: pick('tps') ?? 0,
      window: pick('window') ?? defaultWindow,
    };
  });
}
