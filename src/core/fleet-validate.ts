/**
 * Checks a fleet description whole and answers with every problem at once, each with its JSON
 * path, or with a normalised copy (defaults filled in, times as milliseconds). Nothing is applied
 * from a description with problems: the engine only ever sees the normalised copy.
 */
import { MAX_MESSAGING_LIMIT_24H, type NumberStatus, type TemplateStatus } from './fleet.js';
import { validateNumberLimits } from './number-limits.js';
import { PHONE_EXPECTED, isPhone } from './phone.js';
import { type Obj, Reader } from './fleet-reader.js';
import { type FleetWhatsAppComponents, readWhatsAppComponents } from './fleet-whatsapp-components.js';
import { type Problem, pathIndex } from './problems.js';
import { MAX_PLACEHOLDERS, scanPlaceholders } from './template-text.js';

/** A number as the engine keeps it: every optional field decided. */
export interface FleetNumber {
  readonly phone: string;
  readonly throughputPerHour: number;
  readonly messagingLimit24h: number;
  readonly messagesPerSecond: number | undefined;
  readonly status: NumberStatus;
  readonly pausedUntil: number | undefined;
  readonly account: string | undefined;
  /** WhatsApp Cloud API ids; `wabaId` filled in from the business when the number has none. */
  readonly whatsapp?: { readonly phoneNumberId: string; readonly wabaId: string | undefined };
  /** Portfolio whose limit the number shares: its own `portfolioId`, else its business's. */
  readonly portfolioId: string | undefined;
}

export interface FleetTemplateType {
  readonly id: number;
  readonly name: string;
  readonly templateIds: readonly number[];
}

export interface FleetBusiness {
  readonly id: number;
  readonly name: string;
  readonly companyId: number | undefined;
  readonly numbers: readonly FleetNumber[];
  readonly templateTypes: readonly FleetTemplateType[];
  readonly whatsapp?: { readonly wabaId: string };
  readonly portfolioId: string | undefined;
}

/** A portfolio: a messaging limit shared by the numbers that name it. */
export interface FleetPortfolio {
  readonly id: string;
  readonly messagingLimit24h: number;
  readonly uniqueRecipients: boolean;
}

export interface FleetTemplate {
  readonly id: number;
  readonly name: string;
  readonly text: string;
  /** How many values the text takes (`{{1}}`..`{{n}}`). */
  readonly placeholders: number;
  readonly businessIds: readonly number[];
  readonly status: TemplateStatus;
  readonly pausedUntil: number | undefined;
  readonly account: string | undefined;
  readonly example: string | undefined;
  readonly variables: readonly { readonly name: string; readonly index: number }[] | undefined;
  /** WhatsApp Cloud API ids; `name` filled in from the template's name when absent. */
  readonly whatsapp?: {
    readonly name: string;
    readonly language: string;
    readonly id: string | undefined;
    readonly wabaId: string | undefined;
    /** What the template takes at send time; undefined: every value is a body text parameter, in order. */
    readonly components: FleetWhatsAppComponents | undefined;
  };
}

/** A fleet description that passed validation. */
export interface Fleet {
  readonly businesses: readonly FleetBusiness[];
  readonly templates: readonly FleetTemplate[];
  readonly portfolios: readonly FleetPortfolio[];
}

/** The answer of {@link validateFleet}: the normalised fleet, or every problem found. */
export type FleetValidation = { readonly ok: true; readonly fleet: Fleet } | { readonly ok: false; readonly problems: readonly Problem[] };

const NUMBER_KEYS = ['phone', 'throughputPerHour', 'messagingLimit24h', 'messagesPerSecond', 'status', 'pausedUntil', 'account', 'whatsapp', 'portfolioId', 'meta'];
const TYPE_KEYS = ['id', 'name', 'templateIds', 'meta'];
const BUSINESS_KEYS = ['id', 'name', 'companyId', 'numbers', 'templateTypes', 'whatsapp', 'portfolioId', 'meta'];
const PORTFOLIO_KEYS = ['id', 'messagingLimit24h', 'uniqueRecipients', 'meta'];
const TEMPLATE_KEYS = ['id', 'name', 'text', 'businessIds', 'status', 'pausedUntil', 'account', 'example', 'variables', 'whatsapp', 'meta'];
const FLEET_KEYS = ['$schema', 'businesses', 'templates', 'portfolios', 'meta'];
/** What a template's `example` must be (spec 2.2: the text with sample values filled in). */
const EXAMPLE = 'a non-empty string: the text with sample values in place of its {{k}} placeholders';
const PLACEHOLDER_IN_EXAMPLE = /\{\{\s*\d+\s*\}\}/;
/** Ids of the Graph API (phone-number ids, WABA ids, template ids) are digits, written as strings. */
const GRAPH_ID = /^[0-9]{1,32}$/;
const GRAPH_ID_EXPECTED = 'a Graph API id: a string of 1 to 32 digits';
/** Template names on the platform: lowercase letters, digits and underscores. */
const WA_TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
/** Language and locale codes of templates: `en`, `pt_BR`, `zh_HK`, `es_LA`, `fil`. */
const WA_LANGUAGE = /^[a-z]{2,3}(?:_[A-Za-z]{2,4})?$/;

function readNumber(r: Reader, value: unknown, path: string): FleetNumber | undefined {
  const o = r.object(value, path, NUMBER_KEYS);
  if (!o) return undefined;
  const before = r.problems.length;
  const phone = r.string(o['phone'], `${path}.phone`, PHONE_EXPECTED);
  if (phone !== undefined && !isPhone(phone)) r.report(`${path}.phone`, PHONE_EXPECTED, phone);
  const limits = { throughputPerHour: o['throughputPerHour'], messagingLimit24h: o['messagingLimit24h'], messagesPerSecond: o['messagesPerSecond'] };
  r.problems.push(...validateNumberLimits(limits, path));
  const throughputPerHour = limits.throughputPerHour as number;
  const messagingLimit24h = limits.messagingLimit24h as number;
  const messagesPerSecond = limits.messagesPerSecond as number | undefined;
  const status = r.oneOf<NumberStatus>(o['status'], `${path}.status`, ['active', 'paused'], 'active');
  let pausedUntil: number | undefined;
  if (o['pausedUntil'] !== undefined) {
    if (status === 'paused') pausedUntil = r.time(o['pausedUntil'], `${path}.pausedUntil`);
    else if (status !== undefined) r.report(`${path}.pausedUntil`, 'no pause end unless status is "paused"', o['pausedUntil']);
  }
  const account = r.optionalString(o['account'], `${path}.account`);
  const whatsapp = o['whatsapp'] === undefined ? undefined : readNumberIds(r, o['whatsapp'], `${path}.whatsapp`);
  const portfolioId = r.optionalString(o['portfolioId'], `${path}.portfolioId`);
  if (r.problems.length > before) return undefined;
  return {
    phone: phone!,
    throughputPerHour,
    messagingLimit24h,
    messagesPerSecond,
    status: status!,
    pausedUntil,
    account,
    ...(whatsapp ? { whatsapp } : {}),
    portfolioId,
  };
}

function readNumberIds(r: Reader, value: unknown, path: string): NonNullable<FleetNumber['whatsapp']> | undefined {
  const o = r.object(value, path, ['phoneNumberId', 'wabaId']);
  if (!o) return undefined;
  const phoneNumberId = r.matching(o['phoneNumberId'], `${path}.phoneNumberId`, GRAPH_ID, GRAPH_ID_EXPECTED);
  const wabaId = o['wabaId'] === undefined ? undefined : r.matching(o['wabaId'], `${path}.wabaId`, GRAPH_ID, GRAPH_ID_EXPECTED);
  return phoneNumberId === undefined ? undefined : { phoneNumberId, wabaId };
}

function readTemplateIds(r: Reader, value: unknown, path: string, templateName: string | undefined, placeholders: number | undefined): NonNullable<FleetTemplate['whatsapp']> | undefined {
  const o = r.object(value, path, ['name', 'language', 'id', 'wabaId', 'components']);
  if (!o) return undefined;
  const nameExpected = 'a template name of the platform: 1 to 512 lowercase letters, digits or underscores';
  let name: string | undefined;
  if (o['name'] !== undefined) name = r.matching(o['name'], `${path}.name`, WA_TEMPLATE_NAME, nameExpected);
  else if (templateName !== undefined) {
    // The fleet name stands in for the platform's name only when it is one.
    if (WA_TEMPLATE_NAME.test(templateName)) name = templateName;
    else r.report(`${path}.name`, `${nameExpected} (needed because the template's name ${JSON.stringify(templateName)} is not one)`, undefined);
  }
  const language = r.matching(o['language'], `${path}.language`, WA_LANGUAGE, 'a language and locale code such as "pt_BR", "en_US" or "es"');
  const id = o['id'] === undefined ? undefined : r.matching(o['id'], `${path}.id`, GRAPH_ID, GRAPH_ID_EXPECTED);
  const wabaId = o['wabaId'] === undefined ? undefined : r.matching(o['wabaId'], `${path}.wabaId`, GRAPH_ID, GRAPH_ID_EXPECTED);
  const components = o['components'] === undefined ? undefined : readWhatsAppComponents(r, o['components'], `${path}.components`, placeholders);
  return name === undefined || language === undefined ? undefined : { name, language, id, wabaId, components };
}

function readType(r: Reader, value: unknown, path: string): FleetTemplateType | undefined {
  const o = r.object(value, path, TYPE_KEYS);
  if (!o) return undefined;
  const before = r.problems.length;
  const id = r.id(o['id'], `${path}.id`);
  const name = r.string(o['name'], `${path}.name`);
  const list = r.array(o['templateIds'], `${path}.templateIds`);
  const templateIds: number[] = [];
  list?.forEach((t, i) => {
    const tid = r.id(t, pathIndex(`${path}.templateIds`, i));
    if (tid !== undefined) templateIds.push(tid);
  });
  if (r.problems.length > before) return undefined;
  return { id: id!, name: name!, templateIds };
}

function readBusiness(r: Reader, value: unknown, path: string): FleetBusiness | undefined {
  const o = r.object(value, path, BUSINESS_KEYS);
  if (!o) return undefined;
  const id = r.id(o['id'], `${path}.id`);
  const name = r.string(o['name'], `${path}.name`);
  const companyId = o['companyId'] === undefined ? undefined : r.id(o['companyId'], `${path}.companyId`);
  const numbers = (r.array(o['numbers'], `${path}.numbers`) ?? []).map((n, i) => readNumber(r, n, pathIndex(`${path}.numbers`, i)));
  const types = (r.array(o['templateTypes'], `${path}.templateTypes`) ?? []).map((t, i) => readType(r, t, pathIndex(`${path}.templateTypes`, i)));
  let whatsapp: { wabaId: string } | undefined;
  if (o['whatsapp'] !== undefined) {
    const w = r.object(o['whatsapp'], `${path}.whatsapp`, ['wabaId']);
    const wabaId = w ? r.matching(w['wabaId'], `${path}.whatsapp.wabaId`, GRAPH_ID, GRAPH_ID_EXPECTED) : undefined;
    if (wabaId !== undefined) whatsapp = { wabaId };
  }
  const portfolioId = r.optionalString(o['portfolioId'], `${path}.portfolioId`);
  // A business with a bad name or number still takes part in the cross-checks, so one typo does
  // not hide the reference problems of the rest of the file; any problem fails the whole fleet.
  if (id === undefined) return undefined;
  // A number without a WABA of its own belongs to its business's.
  const withWaba = whatsapp
    ? numbers.filter(present).map((n) => (n.whatsapp && n.whatsapp.wabaId === undefined ? { ...n, whatsapp: { ...n.whatsapp, wabaId: whatsapp.wabaId } } : n))
    : numbers.filter(present);
  // A number without a portfolio of its own shares its business's.
  const withPortfolio = portfolioId === undefined ? withWaba : withWaba.map((n) => (n.portfolioId === undefined ? { ...n, portfolioId } : n));
  return { id, name: name ?? '', companyId, numbers: withPortfolio, templateTypes: types.filter(present), ...(whatsapp ? { whatsapp } : {}), portfolioId };
}

function readTemplate(r: Reader, value: unknown, path: string): FleetTemplate | undefined {
  const o = r.object(value, path, TEMPLATE_KEYS);
  if (!o) return undefined;
  const id = r.id(o['id'], `${path}.id`);
  const name = r.string(o['name'], `${path}.name`);
  const text = r.string(o['text'], `${path}.text`);
  // undefined: a text that failed its own check (its problem reported) or none.
  const placeholders = text === undefined ? undefined : placeholdersOf(r, text, `${path}.text`);
  const businessIds = readBusinessIds(r, o['businessIds'], `${path}.businessIds`);
  const status = r.oneOf<TemplateStatus>(o['status'], `${path}.status`, ['active', 'paused', 'disabled'], 'active');
  let pausedUntil: number | undefined;
  if (o['pausedUntil'] !== undefined) {
    if (status === 'paused') pausedUntil = r.time(o['pausedUntil'], `${path}.pausedUntil`);
    else if (status !== undefined) r.report(`${path}.pausedUntil`, 'no pause end unless status is "paused"', o['pausedUntil']);
  }
  const account = r.optionalString(o['account'], `${path}.account`);
  const example = o['example'] === undefined ? undefined : r.string(o['example'], `${path}.example`, EXAMPLE);
  // The example is the text as a recipient reads it: a placeholder left in it is a copy of the text.
  if (example !== undefined && PLACEHOLDER_IN_EXAMPLE.test(example)) r.report(`${path}.example`, EXAMPLE, example);
  const variables = o['variables'] === undefined ? undefined : readVariables(r, o['variables'], `${path}.variables`, placeholders);
  const whatsapp = o['whatsapp'] === undefined ? undefined : readTemplateIds(r, o['whatsapp'], `${path}.whatsapp`, name, placeholders);
  if (id === undefined) return undefined;
  // Placeholder count -1 marks a text that failed its own check: the type check skips it.
  return {
    id,
    name: name ?? '',
    text: text ?? '',
    placeholders: placeholders ?? -1,
    businessIds,
    status: status ?? 'active',
    pausedUntil,
    account,
    example,
    variables,
    ...(whatsapp ? { whatsapp } : {}),
  };
}

/** The placeholders a template's text takes, or undefined after reporting why the text is not one. */
function placeholdersOf(r: Reader, text: string, path: string): number | undefined {
  const scan = scanPlaceholders(text);
  if (scan.ok) return scan.count;
  r.report(path, scan.expected, text);
  return undefined;
}

function readBusinessIds(r: Reader, value: unknown, path: string): number[] {
  const businessIds: number[] = [];
  r.array(value, path)?.forEach((b, i) => {
    const bid = r.id(b, pathIndex(path, i));
    if (bid === undefined) return;
    if (businessIds.includes(bid)) r.report(pathIndex(path, i), 'a business id not listed before', bid);
    else businessIds.push(bid);
  });
  return businessIds;
}

/** The names of a text's placeholders (`placeholders` undefined: the text failed its own check, so only the range is checked). */
function readVariables(r: Reader, value: unknown, path: string, placeholders: number | undefined): { name: string; index: number }[] {
  const variables: { name: string; index: number }[] = [];
  const named = new Map<number, string>();
  const last = placeholders === undefined ? MAX_PLACEHOLDERS - 1 : placeholders - 1;
  const indexExpected = last < 0 ? 'no variables entry: the text has no placeholders' : `a zero-based placeholder index from 0 to ${last}`;
  r.array(value, path)?.forEach((v, i) => {
    const vp = pathIndex(path, i);
    const vo = r.object(v, vp, ['name', 'index']);
    if (!vo) return;
    const vname = r.string(vo['name'], `${vp}.name`);
    const index = r.integer(vo['index'], `${vp}.index`, 0, last, indexExpected);
    if (index !== undefined) {
      // Two names for one placeholder would leave GET /messenger/businesses/ to pick one.
      const first = named.get(index);
      if (first !== undefined) return r.report(`${vp}.index`, `an index not named before (first at ${first})`, index);
      named.set(index, `${vp}.index`);
    }
    if (vname !== undefined && index !== undefined) variables.push({ name: vname, index });
  });
  return variables;
}

function readPortfolio(r: Reader, value: unknown, path: string): FleetPortfolio | undefined {
  const o = r.object(value, path, PORTFOLIO_KEYS);
  if (!o) return undefined;
  const id = r.string(o['id'], `${path}.id`);
  const messagingLimit24h = r.integer(o['messagingLimit24h'], `${path}.messagingLimit24h`, 1, MAX_MESSAGING_LIMIT_24H, `an integer from 1 to ${MAX_MESSAGING_LIMIT_24H}`);
  let uniqueRecipients = true;
  if (o['uniqueRecipients'] !== undefined) {
    if (typeof o['uniqueRecipients'] === 'boolean') uniqueRecipients = o['uniqueRecipients'];
    else r.report(`${path}.uniqueRecipients`, 'true or false', o['uniqueRecipients']);
  }
  return id === undefined || messagingLimit24h === undefined ? undefined : { id, messagingLimit24h, uniqueRecipients };
}

/** Portfolio ids are unique, and every `portfolioId` of a business or number names one. */
function checkPortfolios(r: Reader, portfolios: readonly (FleetPortfolio | undefined)[], rawPortfolios: readonly unknown[], businesses: readonly unknown[]): void {
  const portfolioAt = new Map<string, number>();
  portfolios.forEach((p, i) => {
    if (!p) return;
    const first = portfolioAt.get(p.id);
    if (first !== undefined) r.report(`$.portfolios[${i}].id`, `a portfolio id not used before (first at $.portfolios[${first}].id)`, p.id);
    else portfolioAt.set(p.id, i);
  });
  // A portfolio whose own id failed is not "unknown": its problem is reported already.
  const failed = new Set(rawPortfolios.filter((raw, i) => portfolios[i] === undefined && typeof raw === 'object' && raw !== null).map((raw) => (raw as Obj)['id']));
  const ids = [...portfolioAt.keys()];
  const listed =
    ids
      .slice(0, 5)
      .map((k) => JSON.stringify(k))
      .join(', ') + (ids.length > 5 ? ', …' : '');
  const known = ids.length === 0 ? 'the id of a portfolio of the fleet ($.portfolios lists none)' : `the id of a portfolio of the fleet (one of ${listed})`;
  const checkRef = (value: unknown, path: string): void => {
    if (typeof value === 'string' && value !== '' && !portfolioAt.has(value) && !failed.has(value)) r.report(path, known, value);
  };
  businesses.forEach((b, bi) => {
    if (typeof b !== 'object' || b === null) return;
    const bo = b as Obj;
    checkRef(bo['portfolioId'], `$.businesses[${bi}].portfolioId`);
    const numbers = bo['numbers'];
    if (Array.isArray(numbers)) {
      numbers.forEach((n: unknown, ni) => {
        if (typeof n === 'object' && n !== null) checkRef((n as Obj)['portfolioId'], `$.businesses[${bi}].numbers[${ni}].portfolioId`);
      });
    }
  });
}

function present<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/** Cross-references: unique ids and phones, types linking known templates of their own business. */
function checkReferences(r: Reader, businesses: readonly (FleetBusiness | undefined)[], templates: readonly (FleetTemplate | undefined)[], rawTemplates: readonly unknown[]): void {
  const businessAt = new Map<number, number>();
  const phoneAt = new Map<string, string>();
  const phoneNumberIdAt = new Map<string, string>();
  businesses.forEach((b, bi) => {
    if (!b) return;
    const path = `$.businesses[${bi}]`;
    const first = businessAt.get(b.id);
    if (first !== undefined) r.report(`${path}.id`, `a business id not used before (first at $.businesses[${first}].id)`, b.id);
    else businessAt.set(b.id, bi);
    b.numbers.forEach((n, ni) => {
      const firstPhone = phoneAt.get(n.phone);
      if (firstPhone !== undefined) r.report(`${path}.numbers[${ni}].phone`, `a phone not used before (first at ${firstPhone})`, n.phone);
      else phoneAt.set(n.phone, `${path}.numbers[${ni}].phone`);
      // Two numbers on one phone-number id would send from the same line and share its webhooks.
      const pnid = n.whatsapp?.phoneNumberId;
      if (pnid === undefined) return;
      const firstId = phoneNumberIdAt.get(pnid);
      if (firstId !== undefined) r.report(`${path}.numbers[${ni}].whatsapp.phoneNumberId`, `a phone-number id not used before (first at ${firstId})`, pnid);
      else phoneNumberIdAt.set(pnid, `${path}.numbers[${ni}].whatsapp.phoneNumberId`);
    });
    const typeAt = new Map<number, number>();
    b.templateTypes.forEach((t, ti) => {
      const firstType = typeAt.get(t.id);
      if (firstType !== undefined) r.report(`${path}.templateTypes[${ti}].id`, `a template type id not used before in this business (first at ${path}.templateTypes[${firstType}].id)`, t.id);
      else typeAt.set(t.id, ti);
    });
  });

  const templateAt = new Map<number, number>();
  templates.forEach((t, ti) => {
    if (!t) return;
    const first = templateAt.get(t.id);
    if (first !== undefined) r.report(`$.templates[${ti}].id`, `a template id not used before (first at $.templates[${first}].id)`, t.id);
    else templateAt.set(t.id, ti);
    t.businessIds.forEach((bid, i) => {
      if (!businessAt.has(bid)) r.report(`$.templates[${ti}].businessIds[${i}]`, 'the id of a business of the fleet', bid);
    });
  });

  businesses.forEach((b, bi) => {
    b?.templateTypes.forEach((type, ti) => {
      const path = `$.businesses[${bi}].templateTypes[${ti}].templateIds`;
      const seen = new Set<number>();
      let placeholders: { count: number; at: string } | undefined;
      type.templateIds.forEach((tid, i) => {
        const at = `${path}[${i}]`;
        if (seen.has(tid)) return r.report(at, 'a template id not listed before in this type', tid);
        seen.add(tid);
        const tIndex = templateAt.get(tid);
        if (tIndex === undefined) {
          // A template whose own id failed is not "unknown": its problems are reported already.
          const failedHere = rawTemplates.some((raw, k) => templates[k] === undefined && typeof raw === 'object' && raw !== null && (raw as Obj)['id'] === tid);
          if (!failedHere) r.report(at, 'the id of a template of the fleet', tid);
          return;
        }
        const template = templates[tIndex]!;
        if (!template.businessIds.includes(b.id)) {
          return r.report(at, `a template associated with business ${b.id} (template ${tid} lists businessIds ${JSON.stringify(template.businessIds)})`, tid);
        }
        if (template.placeholders < 0) return;
        if (placeholders === undefined) placeholders = { count: template.placeholders, at };
        else if (placeholders.count !== template.placeholders) {
          r.report(
            at,
            `a template taking ${placeholders.count} placeholder value(s) like the type's template at ${placeholders.at}, since every contact of a type brings one set of values (template ${tid} takes ${template.placeholders})`,
            tid,
          );
        }
      });
    });
  });
}

/**
 * Validates a fleet description (parsed JSON, or an object literal) and normalises it.
 * Never throws: bad input of any shape comes back as problems.
 */
export function validateFleet(input: unknown): FleetValidation {
  const r = new Reader();
  const o = r.object(input, '$', FLEET_KEYS);
  if (!o) return { ok: false, problems: r.problems };
  const businesses = (r.array(o['businesses'], '$.businesses') ?? []).map((b, i) => readBusiness(r, b, `$.businesses[${i}]`));
  const rawTemplates = r.array(o['templates'], '$.templates') ?? [];
  const templates = rawTemplates.map((t, i) => readTemplate(r, t, `$.templates[${i}]`));
  checkReferences(r, businesses, templates, rawTemplates);
  const rawPortfolios = o['portfolios'] === undefined ? [] : (r.array(o['portfolios'], '$.portfolios') ?? []);
  const portfolios = rawPortfolios.map((p, i) => readPortfolio(r, p, `$.portfolios[${i}]`));
  // Portfolios that are not a list are one problem, not one more for every reference to them.
  if (o['portfolios'] === undefined || Array.isArray(o['portfolios'])) checkPortfolios(r, portfolios, rawPortfolios, Array.isArray(o['businesses']) ? o['businesses'] : []);
  if (r.problems.length > 0) return { ok: false, problems: r.problems };
  return { ok: true, fleet: { businesses: businesses.filter(present), templates: templates.filter(present), portfolios: portfolios.filter(present) } };
}
