/**
 * Reading a template's WhatsApp `components` (fleet.ts, `WhatsAppTemplateComponents`): which of the
 * contact's values fill the header, the body and the buttons of the approved template. Every
 * problem is recorded with its JSON path; what spans the template (a variable beyond the text's
 * placeholders, a button index used twice, named and positional parameters mixed, a parameter name
 * used twice) is checked here too, since the JSON Schema cannot say it.
 */
import type { WhatsAppBodyParameter, WhatsAppButton, WhatsAppHeader } from './fleet.js';
import type { Obj, Reader } from './fleet-reader.js';
import { pathIndex } from './problems.js';
import { MAX_PLACEHOLDERS } from './template-text.js';

/** A template's components as the channel sends them: the body's parameters decided. */
export interface FleetWhatsAppComponents {
  readonly header: WhatsAppHeader | undefined;
  /** The body's text parameters in placeholder order (the default filled in: the values nothing else takes). */
  readonly body: readonly WhatsAppBodyParameter[];
  readonly buttons: readonly WhatsAppButton[];
}

/** Most buttons a template has (Meta: up to 10 buttons), so indexes 0 to 9. */
export const MAX_TEMPLATE_BUTTONS = 10;
/** A media link: an http(s) URL without spaces. */
export const MEDIA_LINK = /^https?:\/\/\S+$/;
/** Names of named parameters: lowercase letters, digits and underscores (`{{first_name}}`). */
export const PARAMETER_NAME = /^[a-z0-9_]{1,100}$/;
/** A fixed coupon code: Meta takes alphanumeric characters only, at most 15 of them. */
export const COUPON_CODE = /^[A-Za-z0-9]{1,15}$/;
const GRAPH_ID = /^[0-9]{1,32}$/;

const MEDIA_TYPES = ['image', 'video', 'document'] as const;
const BUTTON_TYPES = ['url', 'quick_reply', 'copy_code', 'otp'] as const;
const NAME_EXPECTED = 'a parameter name: 1 to 100 lowercase letters, digits or underscores, as in the approved template';

interface Context {
  readonly r: Reader;
  /** Largest variable index the template's text allows (-1: it takes no values). */
  readonly last: number;
  readonly variableExpected: string;
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function variable(c: Context, value: unknown, path: string, what?: string): number | undefined {
  if (value === undefined && what !== undefined) {
    c.r.report(path, `${what}: ${c.variableExpected}`, value);
    return undefined;
  }
  return c.r.integer(value, path, 0, c.last, c.variableExpected);
}

function parameterName(c: Context, value: unknown, path: string): string | undefined {
  return value === undefined ? undefined : c.r.matching(value, path, PARAMETER_NAME, NAME_EXPECTED);
}

/** Exactly one of `keys` present in `o`, else a problem at `path`; answers the key present. */
function oneSource(c: Context, o: Obj, path: string, keys: readonly string[], what: string): string | undefined {
  const present = keys.filter((k) => o[k] !== undefined);
  if (present.length === 1) return present[0];
  c.r.report(path, `exactly one of ${keys.map((k) => `"${k}"`).join(', ')}: ${what} (found ${present.length === 0 ? 'none' : present.join(', ')})`, o);
  return undefined;
}

function readHeader(c: Context, value: unknown, path: string): { header?: WhatsAppHeader; named?: { path: string; named: boolean } } {
  if (!isObject(value)) {
    c.r.report(path, 'an object', value);
    return {};
  }
  const type = value['type'];
  const before = c.r.problems.length;
  if (type === 'text') {
    const o = c.r.object(value, path, ['type', 'variable', 'parameterName'])!;
    const v = variable(c, o['variable'], `${path}.variable`, "the contact's value of the header's parameter");
    const name = parameterName(c, o['parameterName'], `${path}.parameterName`);
    if (c.r.problems.length > before || v === undefined) return {};
    return { header: { type, variable: v, ...(name !== undefined ? { parameterName: name } : {}) }, named: { path, named: name !== undefined } };
  }
  if (typeof type === 'string' && (MEDIA_TYPES as readonly string[]).includes(type)) {
    const media = type as (typeof MEDIA_TYPES)[number];
    const o = c.r.object(value, path, ['type', 'link', 'id', 'variable', ...(media === 'document' ? ['filename'] : [])])!;
    const source = oneSource(c, o, path, ['link', 'id', 'variable'], `where the ${media} is: an http(s) URL, the id of uploaded media, or the contact's value that is its URL`);
    const link = o['link'] === undefined ? undefined : c.r.matching(o['link'], `${path}.link`, MEDIA_LINK, 'an http(s) URL of the media');
    const id = o['id'] === undefined ? undefined : c.r.matching(o['id'], `${path}.id`, GRAPH_ID, 'a media id of the Graph API: a string of 1 to 32 digits');
    const v = o['variable'] === undefined ? undefined : variable(c, o['variable'], `${path}.variable`);
    const filename = o['filename'] === undefined ? undefined : c.r.string(o['filename'], `${path}.filename`, "a non-empty string: the document's file name");
    if (c.r.problems.length > before || source === undefined) return {};
    return {
      header: {
        type: media,
        ...(link !== undefined ? { link } : {}),
        ...(id !== undefined ? { id } : {}),
        ...(v !== undefined ? { variable: v } : {}),
        ...(filename !== undefined ? { filename } : {}),
      },
    };
  }
  c.r.report(`${path}.type`, 'one of "text", "image", "video", "document"', type);
  return {};
}

function readButton(c: Context, value: unknown, path: string): WhatsAppButton | undefined {
  if (!isObject(value)) {
    c.r.report(path, 'an object', value);
    return undefined;
  }
  const type = value['type'];
  if (typeof type !== 'string' || !(BUTTON_TYPES as readonly string[]).includes(type)) {
    c.r.report(`${path}.type`, `one of ${BUTTON_TYPES.map((t) => `"${t}"`).join(', ')}`, type);
    return undefined;
  }
  const before = c.r.problems.length;
  const sourceKeys: Record<(typeof BUTTON_TYPES)[number], readonly string[]> = { url: ['variable'], quick_reply: ['payload', 'variable'], copy_code: ['couponCode', 'variable'], otp: ['variable'] };
  const t = type as (typeof BUTTON_TYPES)[number];
  const o = c.r.object(value, path, ['type', 'index', ...sourceKeys[t]])!;
  const index = c.r.integer(o['index'], `${path}.index`, 0, MAX_TEMPLATE_BUTTONS - 1, `the button's zero-based index among the template's buttons, 0 to ${MAX_TEMPLATE_BUTTONS - 1}`);
  const button = t === 'quick_reply' ? quickReply(c, o, path, index!) : t === 'copy_code' ? copyCode(c, o, path, index!) : valueButton(c, t, o, path, index!);
  return c.r.problems.length > before ? undefined : button;
}

/** A URL button (the contact's value is the URL's suffix) or a one-time code's (the value is the code). */
function valueButton(c: Context, t: 'url' | 'otp', o: Obj, path: string, index: number): WhatsAppButton | undefined {
  const what = t === 'url' ? "the contact's value appended to the button's URL (its suffix)" : "the contact's one-time code";
  const v = variable(c, o['variable'], `${path}.variable`, what);
  return v === undefined ? undefined : { type: t, index, variable: v };
}

/** A quick reply: the payload its reply webhook carries, fixed or the contact's value. */
function quickReply(c: Context, o: Obj, path: string, index: number): WhatsAppButton | undefined {
  const source = oneSource(c, o, path, ['payload', 'variable'], "the payload the reply webhook carries, fixed or the contact's value");
  const payload = o['payload'] === undefined ? undefined : c.r.string(o['payload'], `${path}.payload`, 'a non-empty string: the payload');
  const v = o['variable'] === undefined ? undefined : variable(c, o['variable'], `${path}.variable`);
  if (source === undefined) return undefined;
  return { type: 'quick_reply', index, ...(payload !== undefined ? { payload } : {}), ...(v !== undefined ? { variable: v } : {}) };
}

/** A copy-code button: the code it copies, fixed or the contact's value. */
function copyCode(c: Context, o: Obj, path: string, index: number): WhatsAppButton | undefined {
  const source = oneSource(c, o, path, ['couponCode', 'variable'], "the code the button copies, fixed or the contact's value");
  const code = o['couponCode'] === undefined ? undefined : c.r.matching(o['couponCode'], `${path}.couponCode`, COUPON_CODE, 'a coupon code: 1 to 15 letters or digits');
  const v = o['variable'] === undefined ? undefined : variable(c, o['variable'], `${path}.variable`);
  if (source === undefined) return undefined;
  return { type: 'copy_code', index, ...(code !== undefined ? { couponCode: code } : {}), ...(v !== undefined ? { variable: v } : {}) };
}

/** A text parameter of the header or the body: where it is, and whether it is named. */
interface TextParameter {
  readonly path: string;
  readonly named: boolean;
}

/**
 * Reads `whatsapp.components` of a template whose text takes `placeholders` values (undefined: the
 * text failed its own check, so only the range of any placeholder is checked). Answers the
 * components with the body's default filled in, or undefined after recording its problems.
 */
export function readWhatsAppComponents(r: Reader, value: unknown, path: string, placeholders: number | undefined): FleetWhatsAppComponents | undefined {
  const o = r.object(value, path, ['header', 'body', 'buttons']);
  if (!o) return undefined;
  const before = r.problems.length;
  const last = placeholders === undefined ? MAX_PLACEHOLDERS - 1 : placeholders - 1;
  const c: Context = { r, last, variableExpected: variableExpected(last, placeholders) };

  const textParameters: TextParameter[] = [];
  let header: WhatsAppHeader | undefined;
  if (o['header'] !== undefined) {
    const read = readHeader(c, o['header'], `${path}.header`);
    header = read.header;
    if (read.named) textParameters.push(read.named);
  }
  const body = o['body'] === undefined ? undefined : readBody(c, o['body'], `${path}.body`, textParameters);
  checkParameterFormat(r, textParameters);
  const buttons = o['buttons'] === undefined ? [] : readButtons(c, o['buttons'], `${path}.buttons`);
  if (r.problems.length > before) return undefined;
  return { header, body: body ?? defaultBody(header, buttons, last), buttons };
}

function variableExpected(last: number, placeholders: number | undefined): string {
  if (last < 0) return "no variable: the template's text has no placeholders, so its contacts bring no values";
  if (placeholders === undefined) return `a zero-based index into the contact's template_variables, from 0 to ${last}`;
  return `a zero-based index into the contact's template_variables, from 0 to ${last} (the template's text takes ${placeholders} value(s))`;
}

/** The body's parameters as given, each a text parameter (names used once). */
function readBody(c: Context, value: unknown, path: string, textParameters: TextParameter[]): WhatsAppBodyParameter[] {
  const r = c.r;
  const body: WhatsAppBodyParameter[] = [];
  const names = new Map<string, string>();
  r.array(value, path)?.forEach((p, i) => {
    const pp = pathIndex(path, i);
    const po = r.object(p, pp, ['variable', 'parameterName']);
    if (!po) return;
    const v = variable(c, po['variable'], `${pp}.variable`, "the contact's value of this body parameter");
    const name = parameterName(c, po['parameterName'], `${pp}.parameterName`);
    if (name !== undefined) {
      const first = names.get(name);
      if (first !== undefined) r.report(`${pp}.parameterName`, `a parameter name not used before in the body (first at ${first})`, name);
      else names.set(name, `${pp}.parameterName`);
    }
    textParameters.push({ path: pp, named: po['parameterName'] !== undefined });
    if (v !== undefined) body.push({ variable: v, ...(name !== undefined ? { parameterName: name } : {}) });
  });
  return body;
}

/** Meta's templates take named parameters or positional ones (`parameter_format`), never both. */
function checkParameterFormat(r: Reader, textParameters: readonly TextParameter[]): void {
  const named = textParameters.filter((t) => t.named);
  if (named.length === 0 || named.length === textParameters.length) return;
  for (const t of textParameters) {
    if (!t.named)
      r.report(
        `${t.path}.parameterName`,
        `${NAME_EXPECTED}, like the template's other text parameters (first at ${named[0]!.path}): a template's parameters are all named or all positional`,
        undefined,
      );
  }
}

/** The buttons, at most {@link MAX_TEMPLATE_BUTTONS}, each index used once. */
function readButtons(c: Context, value: unknown, path: string): WhatsAppButton[] {
  const r = c.r;
  const buttons: WhatsAppButton[] = [];
  const list = r.array(value, path);
  if (list && list.length > MAX_TEMPLATE_BUTTONS) r.report(path, `at most ${MAX_TEMPLATE_BUTTONS} buttons (a template has at most ${MAX_TEMPLATE_BUTTONS})`, list);
  const indexAt = new Map<number, string>();
  list?.forEach((b, i) => {
    const bp = pathIndex(path, i);
    const button = readButton(c, b, bp);
    // A repeated index is reported also when the rest of the button has problems of its own.
    const index = isObject(b) ? b['index'] : undefined;
    if (typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < MAX_TEMPLATE_BUTTONS) {
      const first = indexAt.get(index);
      if (first !== undefined) r.report(`${bp}.index`, `a button index not used before in this template (first at ${first})`, index);
      else indexAt.set(index, `${bp}.index`);
    }
    if (button) buttons.push(button);
  });
  return buttons;
}

/** Without a body given, the body takes the values that no header or button takes, in order. */
function defaultBody(header: WhatsAppHeader | undefined, buttons: readonly WhatsAppButton[], last: number): WhatsAppBodyParameter[] {
  const taken = new Set<number>();
  if (header?.variable !== undefined) taken.add(header.variable);
  for (const b of buttons) if (b.variable !== undefined) taken.add(b.variable);
  const body: WhatsAppBodyParameter[] = [];
  for (let v = 0; v <= last; v++) if (!taken.has(v)) body.push({ variable: v });
  return body;
}
