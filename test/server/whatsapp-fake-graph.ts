/**
 * A local fake of the Graph API's WhatsApp Cloud API, built from Meta's documented request and
 * response shapes (docs/channels.md, "Sources"): it checks every send request field by field
 * (path, bearer token, content type, `messaging_product`, `recipient_type`, `to`, `type`,
 * `template.name`, `template.language.code`, the body component's text parameters and their
 * count), answers like the platform (`{ messaging_product, contacts: [{ input, wa_id }],
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
}
export interface GraphTemplate {
  readonly name: string;
  readonly language: string;
  readonly placeholders: number;
}

/** One request the fake received, with what was wrong with it (empty when it was well formed). */
export interface GraphRequest {
  readonly phoneNumberId: string;
  readonly body: any;
  readonly headers: http.IncomingHttpHeaders;
  readonly problems: string[];
  readonly wamid?: string;
}

/** What to answer a request: the platform's acceptance, one of its errors, or a transport failure. */
export type GraphAnswer =
  | { readonly kind: 'accept' }
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
  const templates = new Map(options.templates.map((t) => [`${t.name}/${t.language}`, t]));
  const sockets = new Set<import('node:net').Socket>();
  const fake: FakeGraph = {
    url: '',
    requests: [],
    inFlight: new Map(),
    maxInFlight: new Map(),
    respond: () => ({ kind: 'accept' }),
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
    const m = new RegExp(`^/${version.replace('.', '\\.')}/(\\d+)/messages$`).exec(req.url ?? '');
    const phoneNumberId = m?.[1] ?? '';
    if (req.method !== 'POST') problems.push(`method: expected POST, got ${req.method}`);
    if (!m) problems.push(`path: expected /${version}/{phone-number-id}/messages, got ${req.url}`);
    else if (!numbers.has(phoneNumberId)) problems.push(`path: unknown phone-number id ${phoneNumberId}`);
    if (req.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) problems.push('authorization: expected the bearer token');
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) problems.push(`content-type: expected application/json, got ${req.headers['content-type']}`);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push('body: not JSON');
    }
    if (body) checkBody(body, problems);
    const record: GraphRequest = { phoneNumberId, body, headers: req.headers, problems };
    fake.requests.push(record);
    if (problems.length > 0) {
      // The platform's answer to a malformed request: code 100, Invalid parameter.
      return graphError(res, 400, 100, problems.join('; '));
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
        return json(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid, message_status: 'accepted' }] });
      }
      case 'error':
        return graphError(res, answer.status ?? 400, answer.code, answer.details ?? `error ${answer.code}`, answer.headers);
      case 'raw':
        res.writeHead(answer.status, { 'content-type': 'text/html', ...answer.headers }).end(answer.body);
        return;
      case 'hang':
        return; // never answered: the client's timeout decides
      case 'reset':
        req.socket.destroy();
        return;
    }
  }

  function checkBody(body: any, problems: string[]): void {
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
    const known = templates.get(`${t.name}/${t.language?.code}`);
    if (!known) return void problems.push(`template: no approved template ${t.name} in ${t.language?.code}`);
    const components = t.components ?? [];
    if (!Array.isArray(components)) return void problems.push('template.components: expected an array');
    const bodyComponent = components.find((c: any) => c?.type === 'body');
    for (const c of components) expectKeys(c, ['type', 'parameters'], '$.template.components[]');
    const parameters = bodyComponent?.parameters ?? [];
    if (parameters.length !== known.placeholders) problems.push(`template.components[body].parameters: expected ${known.placeholders}, got ${parameters.length}`);
    for (const p of parameters) {
      expectKeys(p, ['type', 'text'], '$.template.components[body].parameters[]');
      if (p?.type !== 'text' || typeof p.text !== 'string') problems.push('template.components[body].parameters[]: expected { type: "text", text: string }');
    }
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
function graphError(res: http.ServerResponse, status: number, code: number, details: string, headers?: Readonly<Record<string, string>>): void {
  json(res, status, { error: { message: `(#${code}) ${details}`, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details }, fbtrace_id: 'AazfakeTrace' } }, headers);
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
  s: { wamid: string; status: 'sent' | 'delivered' | 'read' | 'failed'; recipient: string; opaque?: string; errorCode?: number; timestamp?: number; userId?: string },
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

/** A `phone_number_quality_update` notification. */
export function qualityNotification(q: { display: string; event: string; currentLimit?: string; oldLimit?: string; time?: number }) {
  return envelope(
    'phone_number_quality_update',
    {
      display_phone_number: q.display,
      event: q.event,
      ...(q.oldLimit ? { old_limit: q.oldLimit } : {}),
      ...(q.currentLimit ? { current_limit: q.currentLimit } : {}),
    },
    q.time ?? Math.floor(Date.now() / 1000),
  );
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
  const templates: GraphTemplate[] = fleet.templates.map((t: any) => ({ name: t.whatsapp.name ?? t.name, language: t.whatsapp.language, placeholders: (t.text.match(/\{\{\d+\}\}/g) ?? []).length }));
  return { numbers, templates };
}
