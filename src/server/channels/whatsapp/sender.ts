/**
 * The sender: each message is one `POST /{version}/{phone-number-id}/messages` of a template
 * message (request.ts). The sends of one number waiting for the platform at once are bounded by its
 * in-flight window, which follows the number's rate times the platform's answer time (gate.ts), up
 * to `maxInFlightPerNumber`. The answer becomes the engine's outcome through the one error table
 * (answer.ts, `CHANNEL_ERRORS`, `TRANSPORT_FAILURES`); a throttling answer carries the number's
 * rest: its `Retry-After`, or the table's rest escalated per number (throttles.ts). An accepted
 * message is handed to `accepted` (the channel remembers it for the replies to come).
 */
import type { OutgoingMessage, SendOutcome } from '../../../core/dispatch/types.js';
import { classifyAnswer, classifyError, parseRetryAfter, restedOutcome, type SendAnswer } from './answer.js';
import type { FleetIds } from './fleet-ids.js';
import { Gate, InFlightWindow } from './gate.js';
import type { GraphApi } from './graph-client.js';
import { templateMessageBody, templatePart, type TemplateForPart, type TemplatePart } from './request.js';
import { Throttles } from './throttles.js';

export interface SenderOptions {
  readonly ids: FleetIds;
  /** `/v23.0/` (a prefix of every send's path). */
  readonly pathPrefix: string;
  readonly maxInFlightPerNumber: number;
  readonly now: () => number;
}

/** The sender's part of the channel's counters (`WhatsAppChannelStats`). */
export interface SenderStats {
  readonly inFlight: number;
  readonly waiting: number;
  readonly maxWindow: number;
  readonly throttledNumbers: number;
  readonly sent: number;
  readonly failed: number;
}

/** The smallest in-flight window of a number, and the window before anything was measured. */
const MIN_WINDOW = 4;
const INITIAL_WINDOW = 64;

/** A number's gate its sends wait at, and the window that sizes it. */
interface Lane {
  readonly gate: Gate;
  readonly window: InFlightWindow;
}

export class Sender {
  readonly #o: SenderOptions;
  readonly #graph: GraphApi;
  readonly #accepted: (m: OutgoingMessage, answer: SendAnswer) => void;
  readonly #lanes = new Map<string, Lane>();
  readonly #throttles = new Throttles();
  // Built once: each number's path and each template's part of the body.
  readonly #paths = new Map<string, string>();
  readonly #parts = new Map<number, TemplatePart>();
  #inFlight = 0;
  #sent = 0;
  #failed = 0;

  constructor(o: SenderOptions, graph: GraphApi, accepted: (m: OutgoingMessage, answer: SendAnswer) => void) {
    this.#o = o;
    this.#graph = graph;
    this.#accepted = accepted;
  }

  async send(m: OutgoingMessage): Promise<SendOutcome> {
    const o = this.#o;
    const number = o.ids.number(m.phone);
    const template = o.ids.template(m.templateId);
    if (!number || !template) {
      // The fleet the engine runs was changed without the channel: nothing can be sent with it.
      return { status: 'failed', reason: `no WhatsApp ids for number ${m.phone} or template ${m.templateId}`, action: { kind: 'give-up' } };
    }
    const { gate, window } = this.#laneOf(number.phoneNumberId);
    resize(gate, window.arrived(o.now()));
    if (!gate.tryAcquire()) await gate.wait();
    this.#inFlight++;
    const startedAt = o.now();
    try {
      let answer;
      let res;
      try {
        res = await this.#graph.post(this.#pathOf(number.phoneNumberId), templateMessageBody(m, this.#partOf(m.templateId, template)));
        answer = classifyAnswer(res.statusCode, res.text());
      } catch (e) {
        this.#failed++;
        return classifyError(e);
      } finally {
        const now = o.now();
        resize(gate, window.answered(now - startedAt, now));
      }
      if (answer.throttle) {
        this.#failed++;
        const retryAfterMs = parseRetryAfter(res.retryAfter, o.now());
        const restMs = answer.throttle.perNumber ? this.#throttles.throttled(number.phoneNumberId, startedAt, o.now(), answer.throttle.restMs, retryAfterMs) : retryAfterMs;
        return restMs === undefined ? answer.outcome : restedOutcome(answer.outcome, restMs);
      }
      if (answer.outcome.status === 'sent') {
        this.#throttles.succeeded(number.phoneNumberId, startedAt);
        this.#sent++;
        this.#accepted(m, answer);
      } else this.#failed++;
      return answer.outcome;
    } finally {
      this.#inFlight--;
      gate.release();
    }
  }

  stats(): SenderStats {
    let waiting = 0;
    let maxWindow = 0;
    for (const { gate } of this.#lanes.values()) {
      waiting += gate.waiting;
      maxWindow = Math.max(maxWindow, gate.limit);
    }
    return { inFlight: this.#inFlight, waiting, maxWindow, throttledNumbers: this.#throttles.size, sent: this.#sent, failed: this.#failed };
  }

  #laneOf(phoneNumberId: string): Lane {
    let lane = this.#lanes.get(phoneNumberId);
    if (!lane) {
      const window = new InFlightWindow({ min: MIN_WINDOW, max: this.#o.maxInFlightPerNumber, initial: INITIAL_WINDOW });
      this.#lanes.set(phoneNumberId, (lane = { gate: new Gate(window.size), window }));
    }
    return lane;
  }

  #pathOf(phoneNumberId: string): string {
    let path = this.#paths.get(phoneNumberId);
    if (path === undefined) this.#paths.set(phoneNumberId, (path = `${this.#o.pathPrefix}${phoneNumberId}/messages`));
    return path;
  }

  #partOf(templateId: number, template: TemplateForPart): TemplatePart {
    let part = this.#parts.get(templateId);
    if (part === undefined) this.#parts.set(templateId, (part = templatePart(template)));
    return part;
  }
}

function resize(gate: Gate, size: number): void {
  if (size !== gate.limit) gate.setLimit(size);
}
