/**
 * docs/decisions.md against the code and the other pages, so its short records cannot drift as the
 * code moves on. Nothing here needs the build: exports are read from the entry files' text, values
 * from the sources.
 *
 * - The contents list is the page's sections, and every record says what was decided, why, and what
 *   was rejected, briefly, linking to the page that describes the behaviour.
 * - Every relative link names an existing file, and an existing heading of it.
 * - Names in backticks that can be classified without guessing exist: package entries in
 *   package.json, repository paths on disk, constants and type-like names as exports of an entry,
 *   members of exported classes and types in their declaring file, other identifiers in the sources.
 * - Facts a reader could copy hold: a number written beside a constant is its value, an error code
 *   beside a status is that code's status, and the formats of message ids, report download tokens
 *   and webhook secrets are what the code produces.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, normalize, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine, type FleetDescription } from '../../src/index.js';
import { ERROR_CODES, ERROR_STATUS } from '../../src/contract/index.js';
import { generateWebhookSecret, issueReportToken } from '../../src/events/index.js';

const root = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const page = read('docs/decisions.md');

/** Markdown without its fenced code blocks: a `#` line inside one is not a heading. */
const withoutFences = (markdown: string) => markdown.replace(/^ *```[\s\S]*?^ *```/gm, '');

/** GitHub's anchor of a heading: lowercase, punctuation but hyphens and spaces dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** Every anchor of a Markdown file, with GitHub's `-1`, `-2` for repeated headings. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of withoutFences(markdown).matchAll(/^#{1,6} (.+?)\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface DecisionRecord {
  readonly section: string;
  readonly title: string;
  readonly text: string;
}

/** The `## ` sections and the `### ` records under them, each record's text up to the next heading. */
function parse(markdown: string): { sections: string[]; contents: { title: string; anchor: string }[]; records: DecisionRecord[] } {
  const sections: string[] = [];
  const records: DecisionRecord[] = [];
  let contents: { title: string; anchor: string }[] = [];
  for (const block of withoutFences(markdown).split(/^(?=#{2,3} )/m)) {
    const [heading = '', ...rest] = block.split('\n');
    const text = rest.join('\n').trim();
    if (heading.startsWith('## ')) {
      const title = heading.slice(3).trim();
      if (title === 'Contents') contents = [...text.matchAll(/^- \[(.+?)\]\(#(.+?)\)$/gm)].map((m) => ({ title: m[1]!, anchor: m[2]! }));
      else sections.push(title);
    } else if (heading.startsWith('### ')) {
      records.push({ section: sections.at(-1) ?? '', title: heading.slice(4).trim(), text });
    }
  }
  return { sections, contents, records };
}

const { sections, contents, records } = parse(page);

/** The text of the record with this title. */
function recordText(title: string): string {
  const found = records.find((r) => r.title === title);
  if (found === undefined) throw new Error(`docs/decisions.md has no record "${title}"; the test reads a format from it`);
  return found.text;
}

/** Inline code spans of a text. */
const codeSpans = (text: string) => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

/** A documented format such as `v1.<report_id>.<company_id>` as a regular expression, one group per placeholder. */
function formatPattern(format: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const source = format
    .split(/(<[^>]+>)/)
    .map((part) => {
      if (!part.startsWith('<')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(part.slice(1, -1));
      return '([^.:<>]+)';
    })
    .join('');
  return { regex: new RegExp(`^${source}$`), names };
}

// ---- What the package exports, from the sources (no build needed) ----

/**
 * The entries of the package: tsup.config.ts maps each bundle name to its source file, and
 * package.json `exports` says which bundles are public (`./dist/<name>.js`).
 */
const packageJson = JSON.parse(read('package.json')) as { exports: Record<string, unknown> };
const publicBundles = new Set([...JSON.stringify(packageJson.exports).matchAll(/\.\/dist\/([\w-]+)\.js/g)].map((m) => m[1]!));
const entryFiles = [...read('tsup.config.ts').matchAll(/^\s*([\w-]+): '(src\/[\w/.-]+\.ts)'/gm)].filter((m) => publicBundles.has(m[1]!)).map((m) => m[2]!);

/** Names an entry file exports: `export { a, type B, c as d }`, `export type { … }`, `export class X`. */
function exportedNames(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of m[1]!.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      if (name !== '') names.add(name);
    }
  }
  for (const m of source.matchAll(/export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|const|let|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g)) names.add(m[1]!);
  return names;
}

const exportsByEntry = new Map(entryFiles.map((file) => [file, exportedNames(read(file))]));
const exported = new Set([...exportsByEntry.values()].flatMap((names) => [...names]));

/** Every source file under src/ (TypeScript, and the dashboard's browser script), with its text. */
function sourceFiles(dir: string): { file: string; text: string }[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(?:ts|js)$/.test(e.name) ? [{ file: path, text: read(path) }] : [];
  });
}
const sources = sourceFiles('src');
const inSources = (word: string) => {
  const re = new RegExp(`(?<![\\w$#])${word.replace(/[$#]/g, '\\$&')}(?![\\w$])`);
  return sources.some((s) => re.test(s.text));
};

// ---- How a name in backticks is classified ----

/**
 * Names the page writes on purpose that no entry exports: internals a record names, and other
 * software's names (each is said to be the other package's in its record).
 */
const INTERNAL = new Set(['ContractHttpError']);
const FOREIGN = new Set([
  'overlappingSync', // lmdb's option
  'Pool', // undici's connection pool
  'maxRequestsPerSocket', // Node's HTTP server option
]);
/** SMPP command statuses (`ESME_…`) are the protocol's names, not constants of sendpool. */
const isSmppStatus = (name: string) => name.startsWith('ESME_');

const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
/** An identifier, possibly with members and a call: `engine.numberWindows(phone)`, `ManualClock.set`, `#quick`. */
const IDENTIFIER_CHAIN = /^(#?[A-Za-z_$][\w$]*(?:\.#?[A-Za-z_$][\w$]*)*)(\(.*\))?$/;
const hasHump = (word: string) => /[a-z][A-Z]/.test(word) || word.startsWith('#');
const isPascal = (word: string) => /^[A-Z][a-z]/.test(word);

/** Files declaring a class, interface or type of this name. */
const declaringFiles = (name: string) => sources.filter((s) => new RegExp(`(?:class|interface|type)\\s+${name}\\b`).test(s.text));

/** The page's records are short: the whole point of the page. */
const MAX_RECORD_CHARS = 1_200;
/** Sections whose records may stand alone: packaging is about the build, which no topical page describes. */
const SELF_CONTAINED_SECTIONS = new Set(['Packaging']);
const TOPICAL_PAGES = ['concepts', 'engine', 'dispatch-loop', 'contract', 'events', 'server', 'channels', 'cli', 'scaling', 'capacity-planning', 'dashboard', 'benchmarks', 'architecture'].map((p) => `${p}.md`);

describe('docs/decisions.md', () => {
  it('is parsed: sections, contents and records are found (so the checks below are not vacuous)', () => {
    expect(sections.length).toBeGreaterThanOrEqual(10);
    expect(records.length).toBeGreaterThanOrEqual(100);
    expect(entryFiles).toContain('src/index.ts');
    expect(exported).toContain('validateFleet');
  });

  it('lists every section in its contents, in order, with the right anchors', () => {
    expect(contents.map((c) => c.title)).toEqual(sections);
    for (const c of contents) expect(c.anchor, c.title).toBe(slug(c.title));
  });

  it('gives every record a decision, a reason and a rejected alternative, briefly', () => {
    const wrong: string[] = [];
    for (const r of records) {
      for (const label of ['**Decision.**', '**Why.**', '**Rejected.**']) if (!r.text.includes(label)) wrong.push(`"${r.title}": no ${label}`);
      if (r.text.length > MAX_RECORD_CHARS) wrong.push(`"${r.title}": ${r.text.length} characters, more than ${MAX_RECORD_CHARS}: move the behaviour to its topical page and link to it`);
    }
    expect(wrong).toEqual([]);
  });

  it('links every record outside packaging to the topical page that describes the behaviour', () => {
    const unlinked = records
      .filter((r) => !SELF_CONTAINED_SECTIONS.has(r.section))
      .filter((r) => ![...r.text.matchAll(/\]\(([\w-]+\.md)(?:#[^)]*)?\)/g)].some((m) => TOPICAL_PAGES.includes(m[1]!)))
      .map((r) => r.title);
    expect(unlinked).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    const links = [...withoutFences(page).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
    expect(links.length).toBeGreaterThan(100);
    for (const target of links) {
      const [file = '', anchor] = target.split('#');
      const path = file === '' ? 'docs/decisions.md' : normalize(join('docs', file));
      if (!path.startsWith('docs/') || !existsSync(join(root, path))) {
        broken.push(`${target}: no file ${path} under docs/`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(read(path)).has(anchor)) broken.push(`${target}: ${path} has no heading with the anchor #${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it('names package entries that package.json exports', () => {
    const entries = codeSpans(page).filter((s) => /^sendpool(?:\/[\w-]+)?$/.test(s));
    expect(entries.length).toBeGreaterThan(0);
    const missing = entries.filter((s) => packageJson.exports[s === 'sendpool' ? '.' : `./${s.slice('sendpool/'.length)}`] === undefined);
    expect(missing).toEqual([]);
  });

  it('names repository paths that exist', () => {
    // Only paths under a top-level directory or file of the repository; build output and installed
    // packages are not there in a fresh clone.
    const top = new Set(readdirSync(root).filter((name) => name !== 'dist' && name !== 'node_modules'));
    const paths = codeSpans(page).filter((s) => /^[\w.-]+(?:\/[\w.-]+)*\/?$/.test(s) && (s.includes('/') || /\.\w+$/.test(s)) && top.has(s.split('/')[0]!));
    expect(paths.length).toBeGreaterThan(5);
    expect(paths.filter((p) => !existsSync(join(root, p)))).toEqual([]);
  });

  it('names constants and types that an entry exports, and members that their declarations have', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const span of new Set(codeSpans(page))) {
      if (UPPER_SNAKE.test(span)) {
        if (isSmppStatus(span)) continue;
        checked++;
        if (!exported.has(span)) wrong.push(`\`${span}\`: no entry exports it`);
        continue;
      }
      const m = IDENTIFIER_CHAIN.exec(span);
      if (m === null) continue;
      const [head = '', ...members] = m[1]!.split('.');
      if (head in globalThis || FOREIGN.has(head)) continue; // `JSON.parse`, `Symbol.for(…)`, other packages' names
      if (!isPascal(head)) continue; // camelCase names: the next test
      checked++;
      if (INTERNAL.has(head)) {
        if (declaringFiles(head).length === 0) wrong.push(`\`${span}\`: ${head} is named as an internal of src/ but is declared nowhere`);
        continue;
      }
      if (!exported.has(head)) {
        wrong.push(`\`${span}\`: no entry exports ${head}`);
        continue;
      }
      const declared = declaringFiles(head);
      for (const member of members) {
        const re = new RegExp(`(?<![\\w$])${member.replace('#', '\\#')}(?![\\w$])`);
        if (declared.length > 0 && !declared.some((d) => re.test(d.text))) wrong.push(`\`${span}\`: ${declared.map((d) => d.file).join(', ')} declares ${head} without ${member}`);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
    expect(wrong).toEqual([]);
  });

  it('names functions, methods and options that exist in the sources; a bare call is an export', () => {
    // A camelCase name with a hump (`numberWindows`, `retryAt`) is reliably an identifier; plain
    // words (`output`, `deadline`) are left alone. A call written without its receiver
    // (`validateFleet(…)`) reads as a function of the package, so it must be exported; methods are
    // written with their receiver (`engine.takeChanges()`, `store.close()`).
    const wrong: string[] = [];
    let checked = 0;
    for (const span of new Set(codeSpans(page))) {
      const m = IDENTIFIER_CHAIN.exec(span);
      if (m === null) continue;
      const chain = m[1]!.split('.');
      const head = chain[0]!;
      if (isPascal(head) || UPPER_SNAKE.test(head) || head in globalThis || FOREIGN.has(head)) continue;
      for (const word of chain.filter(hasHump)) {
        checked++;
        if (!FOREIGN.has(word) && !exported.has(word) && !inSources(word)) wrong.push(`\`${span}\`: ${word} occurs nowhere in src/`);
      }
      if (chain.length === 1 && m[2] !== undefined && hasHump(head) && !exported.has(head)) wrong.push(`\`${span}\`: a call without a receiver, but no entry exports ${head}`);
    }
    expect(checked).toBeGreaterThanOrEqual(50);
    expect(wrong).toEqual([]);
  });

  it('writes each constant with its value', async () => {
    // "the first 100 rejections (`MAX_REJECTIONS_IN_BODY`)" and "`MAX_REQUEST_RETRIES` (10)".
    const claims = [
      ...[...page.matchAll(/(\d[\d,]*)(?: [a-z-]+){0,3} \(`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`\)/g)].map((m) => ({ name: m[2]!, value: m[1]! })),
      ...[...page.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)` \((\d[\d,]*)\)/g)].map((m) => ({ name: m[1]!, value: m[2]! })),
    ];
    expect(claims.length).toBeGreaterThanOrEqual(4);
    const wrong: string[] = [];
    for (const { name, value } of claims) {
      const file = entryFiles.find((f) => exportsByEntry.get(f)!.has(name));
      if (file === undefined) {
        wrong.push(`${name}: no entry exports it`);
        continue;
      }
      const module = (await import(join(root, file))) as Record<string, unknown>;
      if (module[name] !== Number(value.replace(/,/g, ''))) wrong.push(`${name}: the page says ${value}, the code has ${String(module[name])}`);
    }
    expect(wrong).toEqual([]);
  });

  it('pairs each error code with its HTTP status', () => {
    const codes = new Set<string>(ERROR_CODES);
    const pairs = [
      ...[...page.matchAll(/`([a-z_]+)` (\d{3})\b/g)].map((m) => ({ code: m[1]!, status: Number(m[2]) })),
      ...[...page.matchAll(/\b(\d{3}) `([a-z_]+)`/g)].map((m) => ({ code: m[2]!, status: Number(m[1]) })),
    ].filter((p) => codes.has(p.code));
    expect(pairs.length).toBeGreaterThanOrEqual(4);
    for (const { code, status } of pairs) expect(`${code} ${status}`).toBe(`${code} ${ERROR_STATUS[code as keyof typeof ERROR_STATUS]}`);
  });

  it('states the message id format the engine hands out', () => {
    const format = codeSpans(recordText('Message ids name the contact and the hand-out')).find((s) => s.includes('<'));
    expect(format, 'a format such as `s<submission>.<contact index>.<hand-out>`').toBeDefined();
    const { regex, names } = formatPattern(format!);
    expect(names).toEqual(['submission', 'contact index', 'hand-out']);

    const fleet: FleetDescription = {
      businesses: [{ id: 1, name: 'Acme', numbers: [{ phone: '5511990000001', throughputPerHour: 1000, messagingLimit24h: 10000 }], templateTypes: [{ id: 10, name: 'notice', templateIds: [100] }] }],
      templates: [{ id: 100, name: 'notice', text: 'Hello {{1}}', businessIds: [1] }],
    };
    const engine = createEngine(fleet, { clock: new ManualClock(0) });
    const ticket = engine.submit({ businessId: 1, typeId: 10, maxRetries: 1, contacts: [0, 1, 2].map((i) => ({ phone: `551198765432${i}`, variables: [`Ana ${i}`] })) });
    const first = engine.poll();
    expect(first).toHaveLength(3);
    const fields = (id: string) => {
      const m = regex.exec(id);
      expect(m, `${id} against ${format}`).not.toBeNull();
      return Object.fromEntries(names.map((n, i) => [n, m![i + 1]]));
    };
    for (const message of first) {
      const f = fields(message.messageId);
      expect(`s${f['submission']}`).toBe(ticket.submissionId);
      expect(Number(f['contact index'])).toBe(message.index);
    }
    // A second hand-out of the same contact (a retry) keeps the contact and counts the hand-out.
    const retried = first[1]!;
    engine.report(retried.messageId, { status: 'failed', code: 131000 });
    const again = engine.poll().find((m) => m.index === retried.index);
    expect(again).toBeDefined();
    const before = fields(retried.messageId);
    const after = fields(again!.messageId);
    expect(after['contact index']).toBe(before['contact index']);
    expect(Number(after['hand-out'])).toBe(Number(before['hand-out']) + 1);
  });

  it('states the report download token format and lifetime that the events issue', () => {
    const text = recordText('Events: report download token format');
    const format = codeSpans(text).find((s) => s.startsWith('v1.'));
    expect(format, 'a format such as `v1.<report_id>.…`').toBeDefined();
    const { regex, names } = formatPattern(format!);
    const hours = Number(/valid (\d+) hours/.exec(text)?.[1]);
    const now = 1_735_732_800_000;
    const token = issueReportToken({ reportId: 17, companyId: 3, now, key: 'a key of the host, long enough' });
    const m = regex.exec(token);
    expect(m, `${token} against ${format}`).not.toBeNull();
    const f = Object.fromEntries(names.map((n, i) => [n, m![i + 1]]));
    expect([f['report_id'], f['company_id'], Number(f['expires_at_ms']) - now]).toEqual(['17', '3', hours * 3_600_000]);
  });

  it('states the webhook secret format that the events generate', () => {
    const m = /`(\w+)` \+ base64 of (\d+) random bytes/.exec(recordText('Events: webhook signatures follow Standard Webhooks'));
    expect(m, 'a phrase such as "`whsec_` + base64 of 32 random bytes"').not.toBeNull();
    const secret = generateWebhookSecret({ randomBytes: (n) => new Uint8Array(n).fill(7) });
    expect(secret.startsWith(m![1]!)).toBe(true);
    expect(Buffer.from(secret.slice(m![1]!.length), 'base64')).toHaveLength(Number(m![2]));
  });
});
