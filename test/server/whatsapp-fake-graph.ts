/**
 * A local fake of the Graph API's WhatsApp Cloud API, built from Meta's documented request and
 * response shapes (docs/channels.md, "Sources"): it checks every send request field by field
 * (path, bearer token, content type, `messaging_product`, `recipient_type`, `to`, `type`,
 * `template.name`, `template.language.code`, the body component's text parameters and their
 * count; for a template given with its approved components, in the shape the Message Templates
 * API returns them, every component the way the platform checks it: the body's parameters
 * against its placeholders, positional or named (132000), the header's text or media, a parameter
 * for each URL button with a variable, each copy code and each one-time password button (131008),
 * and a template unknown in the language asked for (132001)), answers like the platform (`{ messaging_product, contacts: [{ input, wa_id }],
 * messages: [{ id: "wamid…" }] }`, or `{ error: { message, type, code, error_data, fbtrace_id } }`),
 * and builds Meta's webhook notifications, signed with the app secret like Meta signs them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureOf } from '../../src/server/channels/whatsapp/index.js';

export const ACCESS_TOKEN = 'EAAtest-access-token-0123456789';
export const APP_SECRET = 'app-secret-0123456789abcdef';
export const VERIFY_TOKEN = 'verify-token-123';
export const WABA_ID = '102290129340398';

export interface GraphNumber {
  readonly phone: string;
  readonly phoneNumberId: string;
  /** The WABA that owns the number: its sends find templates of that WABA (a template belongs to one WABA). */
  readonly wabaId?: string;
}
export interface GraphTemplate {
  readonly name: string;
  readonly language: string;
  readonly placeholders: number;
  /** The approved template's components as the Message Templates API returns them; without them only the body's parameter count is checked. */
  readonly components?: readonly MetaTemplateComponent[];
  /** `parameter_format` of the approved template. @default 'POSITIONAL' */
  readonly parameterFormat?: 'POSITIONAL' | 'NAMED';
  /** The WABA that owns the template; without it, every number may send it. */
  readonly wabaId?: string;
}

/** A component of an approved template (Message Templates API, template components reference). */
export type MetaTemplateComponent =
  | { readonly type: 'HEADER'; readonly format: 'TEXT'; readonly text: string }
  | { readonly type: 'HEADER'; readonly format: 'IMAGE' | 'VIDEO' | 'DOCUMENT' }
  | { readonly type: 'BODY'; readonly text: string }
  | { readonly type: 'FOOTER'; readonly text: string }
  | {
      readonly type: 'BUTTONS';
      readonly buttons: readonly (
        | { readonly type: 'URL'; readonly text: string; readonly url: string }
        | { readonly type: 'QUICK_REPLY'; readonly text: string }
        | { readonly type: 'COPY_CODE'; readonly example: string }
        | { readonly type: 'PHONE_NUMBER'; readonly text: string; readonly phone_number: string }
        | { readonly type: 'OTP'; readonly otp_type: 'copy_code'; readonly text?: string }
      )[];
    };

/** The placeholders of a template text: `{{1}}` (positional) or `{{first_name}}` (named), each once. */
function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(/\{\{([a-z0-9_]+)\}\}/g)].map((m) => m[1]!))];
}

/** One request the fake received, with what was wrong with it (empty when it was well formed). */
export interface GraphRequest {
  readonly phoneNumberId: string;
  readonly body: any;
  readonly headers: http.IncomingHttpHeaders;
  readonly problems: string[];
  /** Set when the platform took the message (an acceptance, also one answered too late for the client). */
  readonly wamid?: string;
  /** When the request arrived (`Date.now()`). */
  readonly at: number;
  /** What the fake answered: `accept`, `error <code>`, `raw <HTTP status>`, `hang`, `reset`; absent while not answered. */
  readonly answer?: string;
  /** When the answer was written. */
  readonly answeredAt?: number;
  /**
   * Whether the answer reached the client: false when the client had given up on the request
   * (its timeout closed the connection) before the answer was written. A client that gave up
   * knows nothing of the answer: for it the outcome is unknown.
   */
  readonly delivered?: boolean;
}

/** What to answer a request: the platform's acceptance, one of its errors, or a transport failure. */
export type GraphAnswer =
  /** Taken by the platform now (its pair clock counts it), answered after `delayMs` when given. */
  | { readonly kind: 'accept'; readonly delayMs?: number }
  | { readonly kind: 'error'; readonly code: number; readonly status?: number; readonly details?: string; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'raw'; readonly status: number; readonly body: string; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' };

export interface FakeGraph {
  readonly url: string;
  readonly requests: GraphRequest[];
  /** Requests being answered now, by phone-number id (for the concurrency bound). */
  readonly inFlight: Map<string, number>;
  readonly maxInFlight: Map<string, number>;
  /** Decides the answer of each well-formed request (default: accept). May wait (hold a request). */
  respond: (request: GraphRequest) => GraphAnswer | Promise<GraphAnswer>;
  /**
   * The platform's pair rate limit (Meta's throughput page: about one message every 6 s from one
   * number to one user, else 131056): a request to a user that number's last message taken went to
   * less than this long ago is refused with 131056, before `respond`. 0: off. @default 0
   */
  pairIntervalMs: number;
  /** The token stops working: requests bearing it are answered 190 (HTTP 401, subcode 463, "Session has expired"). */
  expireToken(token: string): void;
  /** The platform accepts this token too (a new system-user token). */
  acceptToken(token: string): void;
  /** The platform pauses the template (in the WABA given, else everywhere): its sends are refused with 132015. */
  pauseTemplate(name: string, language: string, wabaId?: string): void;
  /** The WABA may not send business-initiated messages until `untilMs`: its numbers' sends are refused with 368. */
  restrictAccount(wabaId: string, untilMs: number): void;
  close(): Promise<void>;
}

let wamidSeq = 0;
/** A platform message id: `wamid.` and base64 text, as the platform writes them. */
export function nextWamid(): string {
  return `wamid.${Buffer.from(`HBgNNTUxMTk5MDAwMDAwMRUCABEYEj${++wamidSeq}`).toString('base64')}`;
}

export async function startFakeGraph(options: { numbers: readonly GraphNumber[]; templates: readonly GraphTemplate[]; version?: string }): Promise<FakeGraph> {
  const version = options.version ?? 'v23.0';
  const numbers = new Map(options.numbers.map((n) => [n.phoneNumberId, n]));
  const templates = new Map(options.templates.map((t) => [`${t.wabaId ?? ''}/${t.name}/${t.language}`, t]));
  /** A template as the number's WABA has it (a template of no WABA: any number's). */
  const templateOf = (number: GraphNumber | undefined, name: string, language: string) => templates.get(`${number?.wabaId ?? ''}/${name}/${language}`) ?? templates.get(`/${name}/${language}`);
  const sockets = new Set<import('node:net').Socket>();
  // The platform's state: its tokens, paused templates, restricted accounts, and the pair clock.
  const validTokens = new Set([ACCESS_TOKEN]);
  const expiredTokens = new Set<string>();
  const pausedTemplates = new Set<string>();
  const restrictedUntil = new Map<string, number>();
  /** When the last message taken from a number to a user was taken, by `<phone-number id>/<to>`. */
  const pairTaken = new Map<string, number>();
  const fake: FakeGraph = {
    url: '',
    requests: [],
    inFlight: new Map(),
    maxInFlight: new Map(),
    respond: () => ({ kind: 'accept' }),
    pairIntervalMs: 0,
    expireToken: (token) => {
      validTokens.delete(token);
      expiredTokens.add(token);
    },
    acceptToken: (token) => {
      expiredTokens.delete(token);
      validTokens.add(token);
    },
    pauseTemplate: (name, language, wabaId) => void pausedTemplates.add(`${wabaId ?? '*'}/${name}/${language}`),
    restrictAccount: (wabaId, untilMs) => void restrictedUntil.set(wabaId, untilMs),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => void handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, text: string): Promise<void> {
    const problems: string[] = [];
    /** What the platform refuses with a code of its own (the template's components, its language). */
    const refusals: { code: number; detail: string }[] = [];
    const m = new RegExp(`^/${version.replace('.', '\\.')}/(\\d+)/messages$`).exec(req.url ?? '');
    const phoneNumberId = m?.[1] ?? '';
    if (req.method !== 'POST') problems.push(`method: expected POST, got ${req.method}`);
    if (!m) problems.push(`path: expected /${version}/{phone-number-id}/messages, got ${req.url}`);
    else if (!numbers.has(phoneNumberId)) problems.push(`path: unknown phone-number id ${phoneNumberId}`);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    // An expired token is the platform's refusal (Graph API error handling: 190, subcode 463), not a malformed request.
    const expired = token !== undefined && expiredTokens.has(token);
    if (!expired && (token === undefined || !validTokens.has(token))) problems.push('authorization: expected the bearer token');
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) problems.push(`content-type: expected application/json, got ${req.headers['content-type']}`);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push('body: not JSON');
    }
    if (body) checkBody(body, numbers.get(phoneNumberId), problems, refusals);
    const at = Date.now();
    const record: GraphRequest = { phoneNumberId, body, headers: req.headers, problems: [...problems, ...refusals.map((r) => `${r.code}: ${r.detail}`)], at };
    fake.requests.push(record);
    const answered = (answer: string) => Object.assign(record, { answer, answeredAt: Date.now(), delivered: !req.socket.destroyed });
    if (problems.length > 0) {
      // The platform's answer to a malformed request: code 100, Invalid parameter.
      answered('error 100');
      return graphError(res, 400, 100, problems.join('; '));
    }
    if (expired) {
      answered('error 190');
      return graphError(res, 401, 190, 'Error validating access token: Session has expired.', undefined, 463);
    }
    if (refusals.length > 0) {
      answered(`error ${refusals[0]!.code}`);
      return graphError(res, 400, refusals[0]!.code, refusals.map((r) => r.detail).join('; '));
    }
    // The platform's own rules, before anything the test decides.
    const number = numbers.get(phoneNumberId);
    const waba = number?.wabaId;
    const name = body.template?.name;
    const language = body.template?.language?.code;
    if (pausedTemplates.has(`*/${name}/${language}`) || (waba !== undefined && pausedTemplates.has(`${waba}/${name}/${language}`))) {
      answered('error 132015');
      return graphError(res, 400, 132015, `Template ${name} is paused due to low quality`);
    }
    if (waba !== undefined && (restrictedUntil.get(waba) ?? 0) > at) {
      answered('error 368');
      return graphError(res, 403, 368, 'The WhatsApp Business Account is restricted from business-initiated messaging');
    }
    const pair = `${phoneNumberId}/${body.to}`;
    const last = pairTaken.get(pair);
    if (fake.pairIntervalMs > 0 && last !== undefined && at - last < fake.pairIntervalMs) {
      answered('error 131056');
      return graphError(res, 400, 131056, 'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.');
    }
    fake.inFlight.set(phoneNumberId, (fake.inFlight.get(phoneNumberId) ?? 0) + 1);
    fake.maxInFlight.set(phoneNumberId, Math.max(fake.maxInFlight.get(phoneNumberId) ?? 0, fake.inFlight.get(phoneNumberId)!));
    let answer: GraphAnswer;
    try {
      answer = await fake.respond(record);
    } finally {
      fake.inFlight.set(phoneNumberId, fake.inFlight.get(phoneNumberId)! - 1);
    }
    switch (answer.kind) {
      case 'accept': {
        const wamid = nextWamid();
        (record as { wamid?: string }).wamid = wamid;
        // Taken now: the pair clock counts it, whether or not the answer reaches the client.
        pairTaken.set(pair, Date.now());
        if (answer.delayMs !== undefined) await new Promise((r) => setTimeout(r, answer.delayMs));
        answered('accept');
        return json(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid, message_status: 'accepted' }] });
      }
      case 'error':
        answered(`error ${answer.code}`);
        return graphError(res, answer.status ?? 400, answer.code, answer.details ?? `error ${answer.code}`, answer.headers);
      case 'raw':
        answered(`raw ${answer.status}`);
        res.writeHead(answer.status, { 'content-type': 'text/html', ...answer.headers }).end(answer.body);
        return;
      case 'hang':
        answered('hang');
        (record as { delivered?: boolean }).delivered = false;
        return; // never answered: the client's timeout decides
      case 'reset':
        answered('reset');
        req.socket.destroy();
        return;
    }
  }

  function checkBody(body: any, number: GraphNumber | undefined, problems: string[], refusals: { code: number; detail: string }[]): void {
    const expectKeys = (o: any, keys: string[], path: string) => {
      if (typeof o !== 'object' || o === null || Array.isArray(o)) return problems.push(`${path}: expected an object`);
      for (const k of Object.keys(o)) if (!keys.includes(k)) problems.push(`${path}.${k}: not a field of the request`);
    };
    expectKeys(body, ['messaging_product', 'recipient_type', 'to', 'type', 'template', 'biz_opaque_callback_data'], '$');
    if (body.messaging_product !== 'whatsapp') problems.push(`messaging_product: expected "whatsapp", got ${JSON.stringify(body.messaging_product)}`);
    if (body.recipient_type !== undefined && body.recipient_type !== 'individual') problems.push('recipient_type: expected "individual"');
    if (typeof body.to !== 'string' || !/^\+?\d{8,15}$/.test(body.to)) problems.push(`to: expected the recipient's phone, got ${JSON.stringify(body.to)}`);
    if (body.type !== 'template') problems.push(`type: expected "template", got ${JSON.stringify(body.type)}`);
    if (body.biz_opaque_callback_data !== undefined && (typeof body.biz_opaque_callback_data !== 'string' || body.biz_opaque_callback_data.length > 512)) {
      problems.push('biz_opaque_callback_data: expected a string of at most 512 characters');
    }
    const t = body.template;
    expectKeys(t, ['name', 'language', 'components'], '$.template');
    if (!t) return;
    expectKeys(t.language, ['code', 'policy'], '$.template.language');
    if (t.language?.policy !== undefined && t.language.policy !== 'deterministic') problems.push('template.language.policy: expected "deterministic"');
    const known = templateOf(number, String(t.name), String(t.language?.code));
    // The platform's answer for a name without an approved translation in that language.
    if (!known) return void refusals.push({ code: 132001, detail: `template name (${t.name}) does not exist in ${t.language?.code}` });
    const components = t.components ?? [];
    if (!Array.isArray(components)) return void problems.push('template.components: expected an array');
    for (const c of components) {
      expectKeys(c, c?.type === 'button' ? ['type', 'sub_type', 'index', 'parameters'] : ['type', 'parameters'], '$.template.components[]');
      if (!['header', 'body', 'button'].includes(c?.type)) problems.push(`template.components[].type: expected header, body or button, got ${JSON.stringify(c?.type)}`);
      if (!Array.isArray(c?.parameters)) problems.push('template.components[].parameters: expected an array');
    }
    const bodyComponent = components.find((c: any) => c?.type === 'body');
    const parameters: any[] = bodyComponent?.parameters ?? [];
    for (const p of parameters) {
      expectKeys(p, ['type', 'text', 'parameter_name'], '$.template.components[body].parameters[]');
      if (p?.type !== 'text' || typeof p.text !== 'string') problems.push('template.components[body].parameters[]: expected { type: "text", text: string }');
    }
    if (!known.components) {
      if (parameters.length !== known.placeholders) problems.push(`template.components[body].parameters: expected ${known.placeholders}, got ${parameters.length}`);
      return;
    }
    checkComponents(known, components, refusals);
  }

  /** The send's components against the approved template's, as the platform checks them. */
  function checkComponents(known: GraphTemplate, sent: any[], refusals: { code: number; detail: string }[]): void {
    const named = known.parameterFormat === 'NAMED';
    const textParameters = (where: string, expected: string[], given: any[]) => {
      if (given.length !== expected.length)
        return refusals.push({ code: 132000, detail: `number of parameters of the ${where} (${given.length}) does not match the expected number of params (${expected.length})` });
      given.forEach((p, i) => {
        if (p?.type !== 'text' || typeof p.text !== 'string' || p.text.length === 0) refusals.push({ code: 131008, detail: `${where} parameter ${i}: the text is missing` });
        if (named && !expected.includes(p?.parameter_name))
          refusals.push({ code: 132000, detail: `${where} parameter ${i}: parameter name ${JSON.stringify(p?.parameter_name)} is not one of ${expected.join(', ')}` });
        if (!named && p?.parameter_name !== undefined) refusals.push({ code: 132012, detail: `${where} parameter ${i}: a positional template takes no parameter_name` });
      });
      return undefined;
    };
    const header = known.components!.find((c) => c.type === 'HEADER');
    const sentHeader = sent.find((c) => c?.type === 'header');
    if (header && header.type === 'HEADER') {
      if (header.format === 'TEXT') textParameters('header', placeholdersOf(header.text), sentHeader?.parameters ?? []);
      else {
        const media = header.format.toLowerCase();
        const p = sentHeader?.parameters?.[0];
        const object = p?.[media];
        if (p?.type !== media || typeof object !== 'object' || (typeof object.link !== 'string' && typeof object.id !== 'string')) {
          refusals.push({ code: 131008, detail: `header: a ${media} parameter with a link or an id is required` });
        } else if (typeof object.link === 'string' && !/^https?:\/\//.test(object.link)) refusals.push({ code: 131009, detail: `header: ${object.link} is not a URL` });
      }
    } else if (sentHeader) refusals.push({ code: 132000, detail: 'header: the template has no header parameters' });
    const body = known.components!.find((c) => c.type === 'BODY');
    textParameters('body', body && body.type === 'BODY' ? placeholdersOf(body.text) : [], sent.find((c) => c?.type === 'body')?.parameters ?? []);
    const buttonsOf = known.components!.find((c) => c.type === 'BUTTONS');
    const buttons = buttonsOf && buttonsOf.type === 'BUTTONS' ? buttonsOf.buttons : [];
    const sentButtons = sent.filter((c) => c?.type === 'button');
    for (const b of sentButtons) {
      if (typeof b.index !== 'string' && typeof b.index !== 'number') refusals.push({ code: 131008, detail: 'button: index is required' });
      else if (buttons[Number(b.index)] === undefined) refusals.push({ code: 132000, detail: `button ${b.index}: the template has no such button` });
    }
    buttons.forEach((b, i) => {
      const given = sentButtons.filter((c) => Number(c.index) === i);
      if (given.length > 1) refusals.push({ code: 132000, detail: `button ${i}: given ${given.length} times` });
      const c = given[0];
      const p = c?.parameters?.[0];
      switch (b.type) {
        case 'URL':
          // Only a URL with a variable takes a parameter: the text appended to it.
          if (!b.url.includes('{{1}}')) return void (c && refusals.push({ code: 132000, detail: `button ${i}: a static URL takes no parameter` }));
          if (c?.sub_type !== 'url' || p?.type !== 'text' || typeof p.text !== 'string' || p.text.length === 0)
            refusals.push({ code: 131008, detail: `button ${i}: the URL's parameter (sub_type url, a text) is required` });
          return;
        case 'OTP':
          // An authentication template's copy code button is a URL button carrying the code.
          if (c?.sub_type !== 'url' || p?.type !== 'text' || typeof p.text !== 'string' || p.text.length === 0)
            refusals.push({ code: 131008, detail: `button ${i}: the one-time password (sub_type url, a text) is required` });
          return;
        case 'COPY_CODE':
          if (c?.sub_type !== 'copy_code' || p?.type !== 'coupon_code' || typeof p.coupon_code !== 'string' || !/^[A-Za-z0-9]+$/.test(p.coupon_code)) {
            refusals.push({ code: 131008, detail: `button ${i}: the coupon code (sub_type copy_code, a coupon_code) is required` });
          }
          return;
        case 'QUICK_REPLY':
          // A payload is optional; given, it is a payload of a quick reply button.
          if (c && (c.sub_type !== 'quick_reply' || p?.type !== 'payload' || typeof p.payload !== 'string')) refusals.push({ code: 132000, detail: `button ${i}: a quick reply takes a payload` });
          return;
        case 'PHONE_NUMBER':
          if (c) refusals.push({ code: 132000, detail: `button ${i}: a phone number button takes no parameter` });
          return;
      }
    });
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  server.keepAliveTimeout = 60_000;
  Object.assign(fake, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  return fake;
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

/**
 * The Graph API's error body (the error codes page's "Error response syntax"), with the headers
 * asked (a throttling answer's `Retry-After`).
 */
function graphError(res: http.ServerResponse, status: number, code: number, details: string, headers?: Readonly<Record<string, string>>, subcode?: number): void {
  json(
    res,
    status,
    {
      error: {
        message: `(#${code}) ${details}`,
        type: 'OAuthException',
        code,
        ...(subcode !== undefined ? { error_subcode: subcode } : {}),
        error_data: { messaging_product: 'whatsapp', details },
        fbtrace_id: 'AazfakeTrace',
      },
    },
    headers,
  );
}

// ------------------------------------------------------------------ webhook notifications

const envelope = (field: string, value: unknown, time?: number) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: WABA_ID, ...(time !== undefined ? { time } : {}), changes: [{ value, field }] }],
});

const metadata = (n: GraphNumber) => ({ display_phone_number: n.phone, phone_number_id: n.phoneNumberId });

/** A `statuses` notification (messages webhook, status reference). */
export function statusNotification(
  n: GraphNumber,
  s: { wamid: string; status: 'sent' | 'delivered' | 'read' | 'failed' | 'held_for_quality_assessment'; recipient: string; opaque?: string; errorCode?: number; timestamp?: number; userId?: string },
) {
  return envelope('messages', {
    messaging_product: 'whatsapp',
    metadata: metadata(n),
    ...(s.userId ? { contacts: [{ profile: { name: 'Test User', username: 'testuser' }, wa_id: s.recipient, user_id: s.userId }] } : {}),
    statuses: [
      {
        id: s.wamid,
        status: s.status,
        timestamp: String(s.timestamp ?? Math.floor(Date.now() / 1000)),
        recipient_id: s.recipient,
        ...(s.userId ? { recipient_user_id: s.userId } : {}),
        ...(s.opaque !== undefined ? { biz_opaque_callback_data: s.opaque } : {}),
        ...(s.status === 'sent' ? { pricing: { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' } } : {}),
        ...(s.status === 'failed'
          ? {
              errors: [
                {
                  code: s.errorCode ?? 131026,
                  title: 'Message undeliverable.',
                  message: 'Message undeliverable.',
                  error_data: { details: 'Message Undeliverable.' },
                  href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
                },
              ],
            }
          : {}),
      },
    ],
  });
}

/** A user's message (messages webhook, text / button references). */
export function messageNotification(n: GraphNumber, m: { from: string; text: string; contextId?: string; button?: { payload: string } }) {
  const content = m.button ? { type: 'button', button: { payload: m.button.payload, text: m.text } } : { type: 'text', text: { body: m.text } };
  return envelope('messages', {
    messaging_product: 'whatsapp',
    metadata: metadata(n),
    contacts: [{ profile: { name: 'Test User' }, wa_id: m.from }],
    messages: [
      {
        ...(m.contextId ? { context: { from: n.phone, id: m.contextId } } : {}),
        from: m.from,
        id: nextWamid(),
        timestamp: String(Math.floor(Date.now() / 1000)),
        ...content,
      },
    ],
  });
}

/** A `message_template_status_update` notification. */
export function templateNotification(t: { name: string; language: string; event: string; id?: string; title?: string; description?: string; time?: number }) {
  return envelope(
    'message_template_status_update',
    {
      event: t.event,
      message_template_id: Number(t.id ?? '1689556908129832'),
      message_template_name: t.name,
      message_template_language: t.language,
      reason: t.event === 'PAUSED' ? 'NONE' : null,
      message_template_category: 'UTILITY',
      ...(t.title ? { other_info: { title: t.title, description: t.description ?? '' } } : {}),
    },
    t.time ?? Math.floor(Date.now() / 1000),
  );
}

/**
 * A `phone_number_quality_update` notification: `current_limit` (deprecated), and the business
 * portfolio's `max_daily_conversations_per_business` when given.
 */
export function qualityNotification(q: { display: string; event: string; currentLimit?: string; oldLimit?: string; businessLimit?: string; time?: number }) {
  return envelope(
    'phone_number_quality_update',
    {
      display_phone_number: q.display,
      event: q.event,
      ...(q.oldLimit ? { old_limit: q.oldLimit } : {}),
      ...(q.currentLimit ? { current_limit: q.currentLimit } : {}),
      ...(q.businessLimit ? { max_daily_conversations_per_business: q.businessLimit } : {}),
    },
    q.time ?? Math.floor(Date.now() / 1000),
  );
}

/**
 * An `account_update` notification (the account_update reference's examples): a restriction with
 * `restriction_info[]` (`restriction_type`, `expiration` in Unix seconds), a violation with
 * `violation_info`, a ban state with `ban_info`, or a bare event (ACCOUNT_DELETED).
 */
export function accountNotification(a: { event: string; restrictions?: { type: string; expiration?: number }[]; violation?: string; banState?: string; wabaId?: string; time?: number }) {
  const value = {
    event: a.event,
    ...(a.restrictions ? { restriction_info: a.restrictions.map((r) => ({ restriction_type: r.type, ...(r.expiration !== undefined ? { expiration: r.expiration } : {}) })) } : {}),
    ...(a.violation ? { violation_info: { violation_type: a.violation } } : {}),
    ...(a.banState ? { ban_info: { waba_ban_state: a.banState, waba_ban_date: 'April 17, 2025' } } : {}),
  };
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: a.wabaId ?? WABA_ID, time: a.time ?? Math.floor(Date.now() / 1000), changes: [{ value, field: 'account_update' }] }],
  };
}

/** POSTs a notification to the server's webhook path, signed as Meta signs it (or as told). */
export async function deliver(url: string, payload: unknown, options: { secret?: string | null; tamper?: boolean } = {}) {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const secret = options.secret === undefined ? APP_SECRET : options.secret;
  if (secret !== null) headers['x-hub-signature-256'] = signatureOf(body, secret);
  const sent = options.tamper ? body.replace('whatsapp', 'whatsapq') : body;
  const res = await fetch(url, { method: 'POST', headers, body: sent });
  return { status: res.status, text: await res.text() };
}

// ------------------------------------------------------------------ fleet

/** The server tests' fleet with WhatsApp ids: business 1's three numbers and three templates. */
export function whatsappFleet(fleet: any) {
  const f = structuredClone(fleet);
  f.businesses[0].whatsapp = { wabaId: WABA_ID };
  f.businesses[0].numbers.forEach((n: any, i: number) => (n.whatsapp = { phoneNumberId: `10654035224292${i}` }));
  f.businesses[1].numbers.forEach((n: any, i: number) => (n.whatsapp = { phoneNumberId: `20654035224292${i}` }));
  for (const t of f.templates) t.whatsapp = { language: 'pt_BR' };
  return f;
}

/** The numbers and templates of {@link whatsappFleet}, as the fake knows them. */
export function graphAccount(fleet: any): { numbers: GraphNumber[]; templates: GraphTemplate[] } {
  const numbers: GraphNumber[] = fleet.businesses.flatMap((b: any) => b.numbers.map((n: any) => ({ phone: n.phone, phoneNumberId: n.whatsapp.phoneNumberId })));
  const templates: GraphTemplate[] = fleet.templates.map((t: any) => ({
    name: t.whatsapp.name ?? t.name,
    language: t.whatsapp.language,
    placeholders: new Set(t.text.match(/\{\{\d+\}\}/g) ?? []).size,
  }));
  return { numbers, templates };
}
