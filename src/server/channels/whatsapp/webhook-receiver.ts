/**
 * The webhook receiver: Meta's requests on `webhookPath`, answered. A GET is the subscription
 * handshake (the verify token, compared in constant time); a POST is a notification, refused
 * unless its `X-Hub-Signature-256` is the app secret's HMAC of the raw body (signature.ts), then
 * read into events (webhook-events.ts) and handed to the channel with the sink. The answer tells
 * Meta whether to deliver again: 200 once what the events did is written, 503 while the channel is
 * not attached, the fleet's memory cannot be read, or the write failed.
 */
import type { ChannelSink, InboundRequest, InboundResponse, InboundRoute } from '../../ports/channel.js';
import { sameSecret, verifySignature } from './signature.js';
import { readWebhook, type WebhookEvent } from './webhook-events.js';

/**
 * What became of a notification's events: acted on and written (or nothing to write); not acted
 * on, as what the fleet remembers of them cannot be read now; acted on but not written.
 */
export type Delivery = 'done' | 'unavailable' | 'not-written';

export interface WebhookReceiverOptions {
  readonly path: string;
  readonly verifyToken: string;
  readonly appSecret: string;
  /** Never given secrets. */
  readonly onWarning: (message: string, details: Readonly<Record<string, unknown>>) => void;
  /** Where events go now; undefined while not attached (or closed). */
  readonly sink: () => ChannelSink | undefined;
  /** Acts on a genuine notification's events. */
  readonly deliver: (events: readonly WebhookEvent[], sink: ChannelSink) => Promise<Delivery>;
}

const ANSWERS: Readonly<Record<Delivery, InboundResponse>> = {
  done: { status: 200, body: 'EVENT_RECEIVED' },
  // What the fleet remembers cannot be read now (Redis away): the provider delivers again.
  unavailable: { status: 503, body: 'not available' },
  // The durable server failed closed: a temporary error, so a redelivery acts again.
  'not-written': { status: 503, body: 'not written' },
};

export class WebhookReceiver implements InboundRoute {
  readonly path: string;
  readonly #o: WebhookReceiverOptions;
  #webhooks = 0;
  #forged = 0;

  constructor(o: WebhookReceiverOptions) {
    this.path = o.path;
    this.#o = o;
  }

  /** Notifications received with a valid signature. */
  get webhooks(): number {
    return this.#webhooks;
  }

  /** Notifications refused (missing or wrong signature). */
  get forged(): number {
    return this.#forged;
  }

  handle(request: InboundRequest): InboundResponse | Promise<InboundResponse> {
    return request.method === 'GET' ? this.#handshake(request.query) : this.#notification(request);
  }

  #handshake(query: InboundRequest['query']): InboundResponse {
    const challenge = query['hub.challenge'];
    if (query['hub.mode'] === 'subscribe' && challenge !== undefined && sameSecret(query['hub.verify_token'], this.#o.verifyToken)) {
      return { status: 200, body: challenge };
    }
    this.#o.onWarning('webhook handshake refused', { mode: query['hub.mode'] ?? null });
    return { status: 403, body: 'verification failed' };
  }

  async #notification(request: InboundRequest): Promise<InboundResponse> {
    if (!verifySignature(request.rawBody, request.headers['x-hub-signature-256'], this.#o.appSecret)) {
      this.#forged++;
      this.#o.onWarning('webhook refused: missing or wrong X-Hub-Signature-256', { bytes: request.rawBody.length });
      return { status: 401, body: 'invalid signature' };
    }
    const sink = this.#o.sink();
    // Not attached yet (or closing): Meta delivers again later.
    if (!sink) return { status: 503, body: 'not ready' };
    let body: unknown;
    try {
      body = JSON.parse(request.rawBody.toString('utf8'));
    } catch {
      return { status: 400, body: 'body is not JSON' };
    }
    this.#webhooks++;
    const { events, skipped } = readWebhook(body);
    if (skipped > 0) this.#o.onWarning('webhook parts not understood were skipped', { skipped });
    return { ...ANSWERS[await this.#o.deliver(events, sink)] };
  }
}
