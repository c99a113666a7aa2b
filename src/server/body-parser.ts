/**
 * Request bodies: JSON only (415 otherwise), decoded by the contract (size limit, every problem at
 * `$`). A large body is decoded in slices (src/contract/json-slices.ts through ./slices.ts), so a
 * 10 MB body does not hold every other request for the length of one `JSON.parse`; its bytes become
 * text in slices too (UTF-8 decoding of a 1.1 MB body in one piece took 4 ms under load, and 50
 * bodies ending in one turn of the loop took that each).
 *
 * Large bodies are decoded and checked one request at a time, in the order they arrived
 * ({@link BodyGate}): the next starts once the one before has been checked (./intake-parse.ts) or
 * answered. Round-robin over every large request in progress kept each one's decoded contacts and
 * checking state alive for seconds under a flood (50 requests of 5,000 contacts), so the garbage
 * collector's scavenges copied them again and again; one at a time, a request's temporary objects
 * die within its own few milliseconds of work. Waiting requests hold only their bytes (outside the
 * JavaScript heap).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { isJsonContentType, parseJsonBody } from '../contract/json-body.js';
import { startJsonBody } from '../contract/json-slices.js';
import { ContractHttpError } from './http-errors.js';
import { runInSlices } from './slices.js';

/**
 * Bodies up to this many bytes (or characters) are decoded at once: `JSON.parse` of 128 KiB takes about 0.5 ms
 * on the reference machine, less than yielding would save (a 1,000-contact send body is about 110 to
 * 230 KB, so the common request of that size is sliced only when its contacts carry much data).
 */
export const SLICED_BODY_MIN_CHARS = 128 * 1024;

/** Characters of work per unit of a sliced decode (scanned or decoded): about 0.1 ms. */
const UNIT_CHARS = 32 * 1024;

/** Bytes turned into text per unit of a sliced decode: about 0.1 ms. */
const UNIT_BYTES = 64 * 1024;

/**
 * The text of a UTF-8 body, `UNIT_BYTES` at a time, each piece cut before a character's first byte
 * (never inside one), so the pieces joined are the text `Buffer.toString('utf8')` gives (invalid
 * sequences become U+FFFD the same way: a cut is never inside a sequence). Exported for tests.
 */
export function startBodyText(bytes: Buffer, unitBytes = UNIT_BYTES): { step(): boolean; text(): string } {
  const parts: string[] = [];
  let at = 0;
  return {
    step() {
      const continues = (i: number) => i < bytes.length && (bytes[i]! & 0xc0) === 0x80;
      let end = Math.min(bytes.length, at + unitBytes);
      // Back to the first byte of a character (continuation bytes are 10xxxxxx, at most 3 of them);
      // a unit shorter than the character ends after it instead.
      let back = end;
      for (let k = 0; k < 3 && back > at && continues(back); k++) back--;
      if (back > at) end = back;
      else for (let k = 0; k < 3 && continues(end); k++) end++;
      parts.push(bytes.toString('utf8', at, end));
      at = end;
      return at >= bytes.length;
    },
    text: () => parts.join(''),
  };
}

/**
 * Places for large requests, taken in the order asked (first come, first served). `enter` resolves
 * with the function that gives the place back; calling it again does nothing.
 */
export class BodyGate {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  /** @param width requests in at once */
  constructor(width: number) {
    this.#free = width;
  }

  /** Requests waiting for a place. */
  get waiting(): number {
    return this.#waiting.length;
  }

  enter(): Promise<() => void> {
    return new Promise((resolve) => {
      const admit = () => {
        let held = true;
        resolve(() => {
          if (!held) return;
          held = false;
          const next = this.#waiting.shift();
          if (next) next();
          else this.#free++;
        });
      };
      if (this.#free > 0) {
        this.#free--;
        admit();
      } else this.#waiting.push(admit);
    });
  }
}

/**
 * Large requests decoded and checked at once, per process (one event loop): 1, so a request's
 * temporary objects live for its own work only (see the top of this file).
 */
const LARGE_AT_ONCE = 1;
const gate = new BodyGate(LARGE_AT_ONCE);
/** The place a decoded large body holds, given back once it is checked ({@link leaveBodyGate}) or answered. */
const placeOf = new WeakMap<object, () => void>();
/** Each request's response, so its place is given back when it closes whatever happens (answered, failed, aborted). */
const responseOf = new WeakMap<IncomingMessage, ServerResponse>();

/**
 * Gives back the place a large body holds, once it is checked: the next large request starts
 * decoding. Nothing when the body holds none (a small body, or given back already).
 */
export function leaveBodyGate(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const release = placeOf.get(body);
  placeOf.delete(body);
  release?.();
}

/** Replaces Fastify's parsers with the contract's JSON decoding, for every route. */
export function installJsonBodyParser(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeAllContentTypeParsers();
  app.addHook('onRequest', (request, reply, next) => {
    responseOf.set(request.raw, reply.raw);
    next();
  });
  // Bytes, not text: a large body's UTF-8 decoding is sliced too (startBodyText).
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (request, body, done) => {
    if (!isJsonContentType(request.headers['content-type'])) return done(new ContractHttpError('unsupported_media_type', []), undefined);
    const bytes = body as Buffer;
    if (bytes.length <= SLICED_BODY_MIN_CHARS) {
      const decoded = parseJsonBody(bytes.toString('utf8'), { maxBodyBytes });
      if (!decoded.ok) return done(new ContractHttpError(decoded.code, decoded.problems), undefined);
      return done(null, decoded.value);
    }
    void gate.enter().then((release) => {
      // Given back at the latest when the response closes (answered, failed, or the client gone).
      const response = responseOf.get(request.raw);
      if (response?.closed === true) {
        release();
        done(new Error('the request closed before its body was decoded'), undefined);
        return;
      }
      response?.once('close', release);
      const text = startBodyText(bytes);
      let decoding: ReturnType<typeof startJsonBody> | undefined;
      runInSlices(() => {
        if (decoding) return decoding.step(UNIT_CHARS);
        if (text.step()) decoding = startJsonBody(text.text(), { maxBodyBytes });
        return false;
      }).then(
        () => {
          const decoded = decoding!.result();
          if (!decoded.ok) {
            release();
            done(new ContractHttpError(decoded.code, decoded.problems), undefined);
            return;
          }
          // Held until the body is checked (leaveBodyGate) or answered.
          if (response !== undefined && typeof decoded.value === 'object' && decoded.value !== null) placeOf.set(decoded.value, release);
          else release();
          done(null, decoded.value);
        },
        (e: unknown) => {
          release();
          done(e instanceof Error ? e : new Error(String(e)), undefined);
        },
      );
    });
  });
}
