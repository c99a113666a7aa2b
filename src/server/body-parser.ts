/**
 * Request bodies: JSON only (415 otherwise), decoded by the contract (size limit, every problem at
 * `$`). A large body is decoded in slices (src/contract/json-slices.ts through ./slices.ts), so a
 * 10 MB body does not hold every other request for the length of one `JSON.parse`; it is decoded
 * from its bytes, which are copied as they arrive (./body-bytes.ts), so neither its bytes nor its
 * text are ever made whole in one piece (joining a 1.1 MB body's chunks, or its text's pieces, took
 * 10 to 30 ms each under load, and 50 bodies ending in one turn of the loop took that each).
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
import { startJsonBytes } from '../contract/json-slices.js';
import { readBodyBytes } from './body-bytes.js';
import { ContractHttpError, RequestClosedError } from './http-errors.js';
import { utf8Problem } from './lib/utf8-check.js';
import { runInSlices } from './slices.js';

/**
 * Bodies up to this many bytes (or characters) are decoded at once: `JSON.parse` of 128 KiB takes about 0.5 ms
 * on the reference machine, less than yielding would save (a 1,000-contact send body is about 110 to
 * 230 KB, so the common request of that size is sliced only when its contacts carry much data).
 */
export const SLICED_BODY_MIN_CHARS = 128 * 1024;

/** Bytes of work per unit of a sliced decode (scanned or decoded): about 0.1 ms. */
const UNIT_BYTES = 32 * 1024;

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
  // Bytes, read by ./body-bytes.ts: a large body is decoded from them in slices, never made one text.
  app.addContentTypeParser('*', { bodyLimit: maxBodyBytes }, (request, payload, done) => {
    if (!isJsonContentType(request.headers['content-type'])) return done(new ContractHttpError('unsupported_media_type', []), undefined);
    readBodyBytes(
      payload,
      maxBodyBytes,
      (bytes) => decodeBody(request.raw, bytes, maxBodyBytes, done),
      (error) => done(error, undefined),
    );
  });
}

/** Decodes a JSON body's bytes: at once when small, in slices (one large body at a time) when large. */
function decodeBody(request: IncomingMessage, bytes: Buffer, maxBodyBytes: number, done: (error: Error | null, body: unknown) => void): void {
  const notUtf8 = utf8Problem(bytes);
  if (notUtf8 !== undefined) return done(new ContractHttpError('invalid_json', [notUtf8]), undefined);
  if (bytes.length <= SLICED_BODY_MIN_CHARS) {
    const decoded = parseJsonBody(bytes.toString('utf8'), { maxBodyBytes });
    if (!decoded.ok) return done(new ContractHttpError(decoded.code, decoded.problems), undefined);
    return done(null, decoded.value);
  }
  void gate.enter().then((release) => {
    // Given back at the latest when the response closes (answered, failed, or the client gone).
    const response = responseOf.get(request);
    if (response?.closed === true) {
      release();
      done(new RequestClosedError(), undefined);
      return;
    }
    response?.once('close', release);
    const decoding = startJsonBytes(bytes, { maxBodyBytes });
    runInSlices(() => decoding.step(UNIT_BYTES)).then(
      () => {
        const decoded = decoding.result();
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
}
