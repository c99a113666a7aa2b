/**
 * Request bodies: JSON only (415 otherwise), decoded by the contract (size limit, every problem at
 * `$`). A large body is decoded in slices (src/contract/json-slices.ts through ./slices.ts), so a
 * 10 MB body does not hold every other request for the length of one `JSON.parse`.
 */
import type { FastifyInstance } from 'fastify';
import { isJsonContentType, parseJsonBody } from '../contract/json-body.js';
import { startJsonBody } from '../contract/json-slices.js';
import { ContractHttpError } from './http-errors.js';
import { runInSlices } from './slices.js';

/**
 * Bodies up to this many characters are decoded at once: `JSON.parse` of 128 KiB takes about 0.5 ms
 * on the reference machine, less than yielding would save (a 1,000-contact send body is about 110 to
 * 230 KB, so the common request of that size is sliced only when its contacts carry much data).
 */
export const SLICED_BODY_MIN_CHARS = 128 * 1024;

/** Characters of work per unit of a sliced decode (scanned or decoded): about 0.1 ms. */
const UNIT_CHARS = 32 * 1024;

/** Replaces Fastify's parsers with the contract's JSON decoding, for every route. */
export function installJsonBodyParser(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: maxBodyBytes }, (request, body, done) => {
    if (!isJsonContentType(request.headers['content-type'])) return done(new ContractHttpError('unsupported_media_type', []), undefined);
    const text = body as string;
    if (text.length <= SLICED_BODY_MIN_CHARS) {
      const decoded = parseJsonBody(text, { maxBodyBytes });
      if (!decoded.ok) return done(new ContractHttpError(decoded.code, decoded.problems), undefined);
      return done(null, decoded.value);
    }
    const decoding = startJsonBody(text, { maxBodyBytes });
    runInSlices(() => decoding.step(UNIT_CHARS)).then(
      () => {
        const decoded = decoding.result();
        if (!decoded.ok) done(new ContractHttpError(decoded.code, decoded.problems), undefined);
        else done(null, decoded.value);
      },
      (e: unknown) => done(e instanceof Error ? e : new Error(String(e)), undefined),
    );
  });
}
