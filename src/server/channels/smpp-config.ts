/**
 * The SMPP channel's options from a configuration file (JSON) and environment variables, for
 * `sendpool serve --sms-channel smpp`. A variable wins over the file, so the password can stay out of
 * the file. Pure: the command line reads the file and hands over its text and the environment.
 * Problems name the file's JSON path or the variable; the password is never shown.
 */
import { problem, type Problem } from '../../core/problems.js';
import { smppOptionProblems, type SmppChannelOptions } from './smpp-options.js';

/** Environment variables read, and the option each sets. */
export const SMPP_ENV = {
  SENDPOOL_SMPP_HOST: 'host',
  SENDPOOL_SMPP_PORT: 'port',
  SENDPOOL_SMPP_TLS: 'tls',
  SENDPOOL_SMPP_SYSTEM_ID: 'systemId',
  SENDPOOL_SMPP_PASSWORD: 'password',
  SENDPOOL_SMPP_SYSTEM_TYPE: 'systemType',
  SENDPOOL_SMPP_SOURCE_ADDR: 'sourceAddr',
  SENDPOOL_SMPP_WINDOW: 'window',
  SENDPOOL_SMPP_TLS_CA_FILE: 'tlsCaFile',
  SENDPOOL_SMPP_TLS_CERT_FILE: 'tlsCertFile',
  SENDPOOL_SMPP_TLS_KEY_FILE: 'tlsKeyFile',
} as const satisfies Record<string, keyof SmppChannelOptions>;

const NUMERIC = new Set(['port', 'window']);
const BOOLEAN = new Set(['tls']);

/** Options a configuration file may set (every option but the event callback). */
const FILE_KEYS = new Set<string>([
  'host',
  'port',
  'tls',
  'systemId',
  'password',
  'systemType',
  'sourceAddr',
  'sourceAddrTon',
  'sourceAddrNpi',
  'destAddrTon',
  'destAddrNpi',
  'deliveryReceipts',
  'window',
  'enquireLinkMs',
  'responseTimeoutMs',
  'bindTimeoutMs',
  'reconnectBackoff',
  'throttleBackoff',
  'validityMs',
  'transientStatuses',
  'retryBackoff',
  'receiptTimeoutMs',
  'maxTrackedReceipts',
  'maxTrackedReplies',
  'interfaceVersion',
  'gsm7DataCoding',
  'concatenation',
  'tlsCaFile',
  'tlsCertFile',
  'tlsKeyFile',
  'tlsRejectUnauthorized',
  'name',
  'priority',
  'binds',
  'bindMode',
  'receiverBinds',
  'tps',
  'smscs',
]);

export type SmppConfigResult = { readonly ok: true; readonly options: SmppChannelOptions } | { readonly ok: false; readonly problems: readonly Problem[] };

/**
 * Builds the options from a file's text (or none) and the environment. `fileName` names the file in
 * problems (`smpp.json: $.window: …`).
 */
export function smppConfig(fileText: string | undefined, env: Readonly<Record<string, string | undefined>>, fileName = 'the SMPP configuration'): SmppConfigResult {
  const problems: Problem[] = [];
  const merged: Record<string, unknown> = {};
  const from: Sources = new Map();
  if (fileText !== undefined) {
    const file = parseFile(fileText, fileName);
    if (!file.ok) return file;
    problems.push(...takeFileOptions(file.options, fileName, merged, from));
  }
  takeVariables(env, merged, from);
  for (const p of smppOptionProblems(merged, 'smpp')) problems.push(placed(p, from, fileName));
  return checked(merged, problems) ? { ok: true, options: merged } : { ok: false, problems };
}

/** Option → where it came from (the file's JSON path or the variable), for problem paths. */
type Sources = Map<string, string>;

/** The file's text as a JSON object, or the one problem that stops reading it. */
function parseFile(fileText: string, fileName: string): { readonly ok: true; readonly options: object } | { readonly ok: false; readonly problems: readonly Problem[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fileText);
  } catch (e) {
    return { ok: false, problems: [plain(fileName, 'a JSON object', `not JSON (${e instanceof Error ? e.message : String(e)})`)] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, problems: [problem(`${fileName}: $`, 'a JSON object of SMPP options', parsed)] };
  return { ok: true, options: parsed };
}

/** Takes the file's options into `merged`; a key that is not an option is a problem. */
function takeFileOptions(options: object, fileName: string, merged: Record<string, unknown>, from: Sources): Problem[] {
  const problems: Problem[] = [];
  for (const [k, v] of Object.entries(options)) {
    if (!FILE_KEYS.has(k)) {
      problems.push(plain(`${fileName}: $.${k}`, `one of the SMPP options (${[...FILE_KEYS].join(', ')})`, 'an option sendpool does not know'));
      continue;
    }
    merged[k] = v;
    from.set(k, `${fileName}: $.${k}`);
  }
  return problems;
}

/** Takes the variables set (and not empty) into `merged`, over the file's values. */
function takeVariables(env: Readonly<Record<string, string | undefined>>, merged: Record<string, unknown>, from: Sources): void {
  for (const [name, option] of Object.entries(SMPP_ENV)) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    from.set(option, name);
    merged[option] = variableValue(option, text);
  }
}

/** A variable's text as its option's type; text that is not of it stays text, for the check to name. */
function variableValue(option: string, text: string): unknown {
  if (NUMERIC.has(option)) return /^[0-9]+$/.test(text) ? Number(text) : text;
  if (BOOLEAN.has(option)) return text === 'true' ? true : text === 'false' ? false : text;
  return text;
}

/**
 * A problem of the merged options (`smpp.window`) at the place its option came from: the file's
 * path or the variable; an option set nowhere names both places it could be set.
 */
function placed(p: Problem, from: Sources, fileName: string): Problem {
  const option = p.path.replace(/^smpp\./, '').split(/[.[]/)[0]!;
  const where = from.get(option);
  const rest = p.path.slice(`smpp.${option}`.length);
  const path = where ? `${where}${rest}` : `${fileName}: $.${option}${rest} (or ${envNameOf(option) ?? 'the file'})`;
  return { ...p, path, message: p.message.replace(p.path, path) };
}

/** Options `smppOptionProblems` found nothing wrong with are the channel's options (it checks every field's type and range). */
function checked(_merged: Record<string, unknown>, problems: readonly Problem[]): _merged is Record<string, unknown> & SmppChannelOptions {
  return problems.length === 0;
}

/** A problem whose `actual` is words, not a value. */
function plain(path: string, expected: string, actual: string): Problem {
  return { path, expected, actual, message: `${path}: expected ${expected}, got ${actual}` };
}

function envNameOf(option: string): string | undefined {
  return Object.entries(SMPP_ENV).find(([, o]) => o === option)?.[0];
}
