/**
 * Timed what-if events for `simulate` and `forecast`: a JSON file (--events FILE) and shortcut
 * flags (--pause-number PHONE@30m …). The file is validated whole against the fleet, every problem
 * with its JSON path, before anything runs.
 *
 * File format: an array of objects, each with `at` (a duration from the start: "30m", "1h30m", or
 * milliseconds) and exactly one action:
 *   { "at": "30m", "pauseNumber": "5511990000001" }
 *   { "at": "2h",  "resumeNumber": "5511990000001" }
 *   { "at": "1h",  "pauseTemplate": 101 }   | "disableTemplate" | "resumeTemplate"
 *   { "at": "3h",  "setLimit": { "phone": "5511990000001", "messagingLimit24h": 100000 } }
 * plus an optional "note" (free text). The same change given twice counts once.
 */
import type { Fleet } from '../index.js';
import type { FleetChange } from '../core/forecast.js';
import { MAX_MESSAGES_PER_SECOND, MAX_MESSAGING_LIMIT_24H, MAX_THROUGHPUT_PER_HOUR, describeValue } from '../index.js';
import { DURATION_SYNTAX, parseDuration } from './duration.js';
import { UsageError, fileProblems } from './errors.js';
import { count } from './format.js';

/** One event, ready to apply, with words for tables and the chart. */
export interface TimedEvent {
  readonly change: FleetChange;
  /** `pause 5511990000001`, `disable template 101`, `limits of 5511990000001: 100,000/24h`. */
  readonly label: string;
  /** Where it came from: `events.json $[2]` or `--pause-number`. */
  readonly source: string;
}

const ACTIONS = ['pauseNumber', 'resumeNumber', 'pauseTemplate', 'disableTemplate', 'resumeTemplate', 'setLimit'] as const;
type Action = (typeof ACTIONS)[number];
const EVENT_KEYS = ['at', 'note', ...ACTIONS];
const LIMIT_KEYS = ['phone', 'throughputPerHour', 'messagingLimit24h', 'messagesPerSecond'];

interface Known {
  readonly phones: ReadonlySet<string>;
  readonly templates: ReadonlySet<number>;
}

function known(fleet: Fleet): Known {
  return {
    phones: new Set(fleet.businesses.flatMap((b) => b.numbers.map((n) => n.phone))),
    templates: new Set(fleet.templates.map((t) => t.id)),
  };
}

/** Reads one event's pieces, collecting problems as `FILE: path: expected …, got …` lines. */
class Reader {
  readonly problems: string[] = [];
  constructor(readonly file: string) {}

  report(path: string, expected: string, value: unknown): void {
    this.problems.push(`${this.file}: ${path}: expected ${expected}, got ${describeValue(value)}`);
  }

  at(value: unknown, path: string): number | undefined {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined) this.report(path, `${DURATION_SYNTAX} (from the start), or milliseconds`, value);
    return ms;
  }

  phone(value: unknown, path: string, k: Known): string | undefined {
    if (typeof value !== 'string' || !k.phones.has(value)) {
      this.report(path, `the phone of a number of the fleet (${[...k.phones].slice(0, 5).join(', ')}${k.phones.size > 5 ? ', …' : ''})`, value);
      return undefined;
    }
    return value;
  }

  template(value: unknown, path: string, k: Known): number | undefined {
    if (typeof value !== 'number' || !k.templates.has(value)) {
      this.report(path, `the id of a template of the fleet (${[...k.templates].slice(0, 8).join(', ')}${k.templates.size > 8 ? ', …' : ''})`, value);
      return undefined;
    }
    return value;
  }

  limit(value: unknown, path: string, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
      this.report(path, `an integer from 1 to ${max}`, value);
      return undefined;
    }
    return value;
  }
}

function readEvent(r: Reader, value: unknown, path: string, k: Known): TimedEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    r.report(path, 'an object such as { "at": "30m", "pauseNumber": "5511990000001" }', value);
    return undefined;
  }
  const o = value as Record<string, unknown>;
  const before = r.problems.length;
  for (const key of Object.keys(o)) {
    if (!EVENT_KEYS.includes(key)) r.report(`${path}.${key}`, `no such field (known: ${EVENT_KEYS.join(', ')})`, o[key]);
  }
  const at = r.at(o['at'], `${path}.at`);
  if (o['note'] !== undefined && typeof o['note'] !== 'string') r.report(`${path}.note`, 'a string', o['note']);
  const actions = ACTIONS.filter((a) => o[a] !== undefined);
  if (actions.length !== 1) {
    r.problems.push(`${r.file}: ${path}: expected exactly one action of ${ACTIONS.join(', ')}, got ${actions.length === 0 ? 'none' : actions.join(' and ')}`);
    return undefined;
  }
  const action: Action = actions[0]!;
  const ap = `${path}.${action}`;
  const event = readAction(r, action, o[action], ap, at ?? 0, k, `${r.file} ${path}`);
  return r.problems.length > before ? undefined : event;
}

function readAction(r: Reader, action: Action, value: unknown, path: string, at: number, k: Known, source: string): TimedEvent | undefined {
  switch (action) {
    case 'pauseNumber':
    case 'resumeNumber': {
      const phone = r.phone(value, path, k);
      if (phone === undefined) return undefined;
      const status = action === 'pauseNumber' ? 'paused' : 'active';
      return { change: { at, kind: 'number-status', phone, status }, label: `${action === 'pauseNumber' ? 'pause' : 'resume'} ${phone}`, source };
    }
    case 'pauseTemplate':
    case 'disableTemplate':
    case 'resumeTemplate': {
      const templateId = r.template(value, path, k);
      if (templateId === undefined) return undefined;
      const [status, verb] = TEMPLATE_ACTIONS[action];
      return { change: { at, kind: 'template-status', templateId, status }, label: `${verb} template ${templateId}`, source };
    }
    case 'setLimit':
      return readSetLimit(r, value, path, at, k, source);
  }
}

/** What each template action sets, and its verb in labels. */
const TEMPLATE_ACTIONS = {
  pauseTemplate: ['paused', 'pause'],
  disableTemplate: ['disabled', 'disable'],
  resumeTemplate: ['active', 'resume'],
} as const;

/** `setLimit`: a number's phone and at least one of its limits (`messagesPerSecond` null removes that window). */
function readSetLimit(r: Reader, value: unknown, path: string, at: number, k: Known, source: string): TimedEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    r.report(path, 'an object such as { "phone": "5511990000001", "messagingLimit24h": 100000 }', value);
    return undefined;
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!LIMIT_KEYS.includes(key)) r.report(`${path}.${key}`, `no such field (known: ${LIMIT_KEYS.join(', ')})`, o[key]);
  }
  const phone = r.phone(o['phone'], `${path}.phone`, k);
  const perHour = o['throughputPerHour'] === undefined ? undefined : r.limit(o['throughputPerHour'], `${path}.throughputPerHour`, MAX_THROUGHPUT_PER_HOUR);
  const per24h = o['messagingLimit24h'] === undefined ? undefined : r.limit(o['messagingLimit24h'], `${path}.messagingLimit24h`, MAX_MESSAGING_LIMIT_24H);
  const perSecond =
    o['messagesPerSecond'] === undefined || o['messagesPerSecond'] === null ? o['messagesPerSecond'] : r.limit(o['messagesPerSecond'], `${path}.messagesPerSecond`, MAX_MESSAGES_PER_SECOND);
  if (o['throughputPerHour'] === undefined && o['messagingLimit24h'] === undefined && o['messagesPerSecond'] === undefined) {
    r.report(path, 'at least one of throughputPerHour, messagingLimit24h, messagesPerSecond', 'none');
  }
  if (phone === undefined) return undefined;
  return {
    change: {
      at,
      kind: 'number-limits',
      phone,
      ...(perHour !== undefined ? { throughputPerHour: perHour } : {}),
      ...(per24h !== undefined ? { messagingLimit24h: per24h } : {}),
      ...(perSecond !== undefined ? { messagesPerSecond: perSecond } : {}),
    },
    label: `limits of ${phone}: ${limitsLabel(perHour, per24h, perSecond)}`,
    source,
  };
}

function limitsLabel(perHour: number | undefined, per24h: number | undefined, perSecond: number | null | undefined): string {
  const parts = [
    perHour !== undefined ? `${count(perHour)}/h` : '',
    per24h !== undefined ? `${count(per24h)}/24h` : '',
    perSecond === null ? 'no per-second' : perSecond !== undefined ? `${count(perSecond)}/s` : '',
  ];
  return parts.filter(Boolean).join(', ');
}

/** Validates a parsed events file against the fleet; throws one UsageError with every problem. */
export function readEvents(file: string, json: unknown, fleet: Fleet): TimedEvent[] {
  const r = new Reader(file);
  const list = json !== null && typeof json === 'object' && !Array.isArray(json) && Array.isArray((json as { events?: unknown }).events) ? (json as { events: unknown[] }).events : json;
  const base = list === json ? '$' : '$.events';
  if (!Array.isArray(list)) {
    throw new UsageError(`${file}: $: expected an array of events such as [{ "at": "30m", "pauseNumber": "5511990000001" }], got ${describeValue(json)}`);
  }
  const k = known(fleet);
  const events = list.map((e, i) => readEvent(r, e, `${base}[${i}]`, k));
  if (r.problems.length > 0) throw new UsageError(fileProblems(file, r.problems));
  return events.filter((e): e is TimedEvent => e !== undefined);
}

/** Shortcut flags: `--pause-number PHONE@30m`, `--disable-template ID@1h`, … */
export const SHORTCUTS = {
  'pause-number': 'pauseNumber',
  'resume-number': 'resumeNumber',
  'pause-template': 'pauseTemplate',
  'disable-template': 'disableTemplate',
  'resume-template': 'resumeTemplate',
} as const satisfies Record<string, Action>;

export type ShortcutFlag = keyof typeof SHORTCUTS;

/** Reads the shortcut flags' values (each `THING@DURATION`); problems name the flag and value. */
export function readShortcuts(values: Partial<Record<ShortcutFlag, readonly string[]>>, fleet: Fleet): TimedEvent[] {
  const k = known(fleet);
  const problems: string[] = [];
  const events: TimedEvent[] = [];
  for (const flag of Object.keys(SHORTCUTS) as ShortcutFlag[]) {
    const action = SHORTCUTS[flag];
    const isNumber = action === 'pauseNumber' || action === 'resumeNumber';
    for (const text of values[flag] ?? []) {
      const what = isNumber ? 'PHONE' : 'TEMPLATE_ID';
      const m = /^([^@]+)@(.+)$/.exec(text);
      const r = new Reader(`--${flag} ${JSON.stringify(text)}`);
      if (!m) {
        problems.push(`--${flag} ${JSON.stringify(text)}: expected ${what}@WHEN such as ${isNumber ? '5511990000001@30m' : '101@1h'}, got ${JSON.stringify(text)}`);
        continue;
      }
      const at = r.at(m[2], 'WHEN');
      const subject = isNumber ? m[1] : /^[0-9]+$/.test(m[1]!) ? Number(m[1]) : m[1];
      const event = readAction(r, action, subject, what, at ?? 0, k, `--${flag}`);
      problems.push(...r.problems);
      if (event && r.problems.length === 0) events.push(event);
    }
  }
  if (problems.length > 0) throw new UsageError(problems.length === 1 ? problems[0]! : `${problems.length} problems in the event flags\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return events;
}

/**
 * Events in time order (stable: same time keeps file order, then flags), each once: the same
 * change given twice (in the file and as a flag, say) is one event, listed and applied once.
 */
export function ordered(events: readonly TimedEvent[]): TimedEvent[] {
  const seen = new Set<string>();
  const once = events.filter((e) => {
    const key = JSON.stringify(e.change);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return once
    .map((e, i) => [e, i] as const)
    .sort((a, b) => a[0].change.at - b[0].change.at || a[1] - b[1])
    .map(([e]) => e);
}
