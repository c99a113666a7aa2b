/**
 * A request body decoded a slice at a time, so a host can answer other requests between slices:
 * `JSON.parse` of a 10,000-contact body (2.3 MB) holds the event loop for about 10 ms on the
 * reference machine, and there is no way to pause it. What can be cut is the text: the bulk of a
 * body is one array (`contacts` of a send request, the items of an SMS batch), so the text is
 * scanned for the boundaries of that array's elements and each run of elements is decoded by
 * `JSON.parse` on its own (`[` + run + `]`); the rest of the body, with the arrays cut out, is
 * decoded last and the arrays put back in place.
 *
 * Arrays split: the whole body when it is an array, and every member of a top-level object whose
 * value is an array. Anything else (a huge string, a large nested object) is decoded with the
 * rest, in one piece.
 *
 * Same answer as {@link parseJsonBody}, always. The scanner only finds boundaries, it does not
 * check the grammar: `JSON.parse` checks every run and the rest, each run must decode to exactly
 * the elements the scanner counted, and the text equals the rest with the runs put back, so a
 * body that decodes in slices decodes whole to the same value. Whenever the scanner meets
 * something it does not expect (invalid JSON, a duplicate key in the top-level object, an empty
 * element), the body is decoded whole by {@link parseJsonBody}: the answer, and the message of a
 * syntax error, are exactly its own (that fallback is one unsliced `JSON.parse`).
 *
 * The body may be given as text ({@link startJsonBody}) or as its UTF-8 bytes
 * ({@link startJsonBytes}): the scanner reads bytes as it reads characters, since every character
 * it looks for is ASCII and a UTF-8 byte below 0x80 is always that character, never part of
 * another; only the runs and the rest become text (a cut is always at one of those characters, so
 * decoding the pieces gives the text decoding the whole gives, invalid sequences included). From
 * bytes no text of the whole body is ever made: a host avoids turning a megabyte body into one
 * string in one piece.
 *
 * Pure: no timers. The host calls `step` and yields between calls as it sees fit.
 */
import { ArgumentError } from '../core/errors.js';
import { problem } from '../core/problems.js';
import { type JsonBodyOptions, type JsonBodyResult, parseJsonBody, utf8Length } from './json-body.js';
import { DEFAULT_MAX_BODY_BYTES } from './limits.js';

/** A body being decoded: {@link startJsonBody}. */
export interface JsonBodySteps {
  /**
   * Does about `units` characters of work (counting and scanning the text, decoding runs of
   * elements) and answers true once the result is known. One element is never cut: an element
   * larger than `units` is decoded in one step.
   */
  step(units: number): boolean;
  /** The decoded body, as {@link parseJsonBody} answers it; valid once `step` answered true. */
  result(): JsonBodyResult;
}

/** Characters of text decoded by one `JSON.parse` call: about 0.3 ms of work on the reference machine. */
const RUN_CHARS = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * What the scanner reads: characters of a text, or bytes of its UTF-8 encoding. Positions are
 * indexes of units (UTF-16 code units, or bytes); the scanner only ever compares them with ASCII.
 */
interface JsonSource {
  readonly length: number;
  /** The unit at `i` (a char code or a byte). */
  at(i: number): number;
  /** Index of the next `"` at or after `from`, or -1. */
  quote(from: number): number;
  /** The text of units `from` to `to` (cut only at ASCII characters). */
  slice(from: number, to?: number): string;
  /** The whole text (the fallback: {@link parseJsonBody}). */
  text(): string;
}

class TextSource implements JsonSource {
  constructor(private readonly t: string) {}
  get length(): number {
    return this.t.length;
  }
  at(i: number): number {
    return this.t.charCodeAt(i);
  }
  quote(from: number): number {
    return this.t.indexOf('"', from);
  }
  slice(from: number, to?: number): string {
    return this.t.slice(from, to);
  }
  text(): string {
    return this.t;
  }
}

/** Invalid sequences become U+FFFD as `Buffer.toString('utf8')` makes them; a byte order mark stays (JSON.parse refuses it). */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

class ByteSource implements JsonSource {
  constructor(private readonly b: Uint8Array) {}
  get length(): number {
    return this.b.length;
  }
  at(i: number): number {
    return this.b[i] as number;
  }
  quote(from: number): number {
    return this.b.indexOf(QUOTE, from);
  }
  slice(from: number, to?: number): string {
    return UTF8.decode(this.b.subarray(from, to));
  }
  text(): string {
    return UTF8.decode(this.b);
  }
}

/** Index of the quote closing the string whose content starts at `from`, or -1. */
function stringEnd(text: JsonSource, from: number): number {
  let i = from;
  for (;;) {
    const q = text.quote(i);
    if (q < 0) return -1;
    // Escaped when preceded by an odd run of backslashes.
    let b = q - 1;
    while (b >= from && text.at(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    i = q + 1;
  }
}

/**
 * End of the value starting at `from` inside a container: the index of the `,` or closing bracket
 * that follows it at the container's level, or -1 at the end of the text.
 */
function valueEnd(text: JsonSource, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.at(i);
    if (c === QUOTE) {
      i = stringEnd(text, i + 1);
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return i;
      depth--;
    } else if (c === COMMA && depth === 0) return i;
  }
  return -1;
}

/** An array of the body decoded in runs: where its brackets are, under which key, its elements. */
interface SplitArray {
  /** Top-level member holding it; undefined when the body itself is the array. */
  readonly key: string | undefined;
  /** Index of `[`. */
  readonly open: number;
  /** Index of `]`, once found. */
  close: number;
  readonly items: unknown[];
}

type Phase = 'size' | 'start' | 'member' | 'after-member' | 'elements' | 'after-element' | 'end' | 'done';

class SlicedJsonBody implements JsonBodySteps {
  private phase: Phase = 'size';
  private pos = 0;
  private bytes = 0;
  private answer: JsonBodyResult | undefined;
  private readonly arrays: SplitArray[] = [];
  private readonly keys = new Set<string>();
  /** Top-level object (members) or array (the body is the array). */
  private topObject = false;
  /** Start of the run of elements not decoded yet, and how many elements it holds. */
  private runStart = 0;
  private runCount = 0;

  /** @param byteLength the body's size in bytes when known (given as bytes); counted otherwise */
  constructor(
    private readonly text: JsonSource,
    private readonly maxBytes: number,
    byteLength?: number,
  ) {
    if (byteLength !== undefined) {
      this.bytes = byteLength;
      if (byteLength > maxBytes) this.tooLarge();
      else this.phase = 'start';
    }
    // A string of n UTF-16 units has at most 3n bytes: skip the count for small bodies.
    else if (text.length * 3 <= maxBytes) this.phase = 'start';
  }

  step(units: number): boolean {
    let budget = Math.max(1, units);
    while (this.phase !== 'done' && budget > 0) {
      const before = this.pos;
      const extra = this.advance(budget);
      budget -= Math.max(1, this.pos - before) + extra;
    }
    return this.phase === 'done';
  }

  result(): JsonBodyResult {
    if (this.answer === undefined) throw new ArgumentError('startJsonBody(…).result()', 'called once step() answered true', 'a call before');
    return this.answer;
  }

  /** One move of the scanner; answers extra work done besides moving `pos` (characters decoded). */
  private advance(budget: number): number {
    switch (this.phase) {
      case 'size':
        return this.size(budget);
      case 'start':
        return this.start();
      case 'member':
        return this.member();
      case 'after-member':
        return this.afterMember();
      case 'elements':
        return this.element();
      case 'after-element':
        return this.afterElement();
      case 'end':
        return this.end();
      default:
        return 0;
    }
  }

  /** Counts the body's bytes first: a body over the limit is refused before anything is parsed. */
  private size(budget: number): number {
    const text = this.text;
    // Counted a slice at a time: a 10 MB body takes a few milliseconds to count.
    const end = Math.min(text.length, this.pos + budget);
    this.bytes += utf8Length(text.slice(this.pos, end));
    this.pos = end;
    if (end < text.length) return 0;
    if (this.bytes > this.maxBytes) this.tooLarge();
    else {
      this.pos = 0;
      this.phase = 'start';
    }
    return 0;
  }

  /** The top-level value: an array, an object, or anything else (decoded whole). */
  private start(): number {
    const c = this.skipSpace();
    if (c === OPEN_BRACKET) this.beginArray(undefined);
    else if (c === OPEN_BRACE) {
      this.topObject = true;
      this.pos++;
      this.phase = this.skipSpace() === CLOSE_BRACE ? 'after-member' : 'member';
    } else return this.whole();
    return 0;
  }

  /** A member of the top-level object: its key, then an array to split or a value to skip. */
  private member(): number {
    const text = this.text;
    if (this.skipSpace() !== QUOTE) return this.whole();
    const close = stringEnd(text, this.pos + 1);
    if (close < 0) return this.whole();
    const literal = text.slice(this.pos, close + 1);
    let key: string;
    try {
      key = literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
    } catch {
      return this.whole();
    }
    // A repeated key: the last one wins in JSON.parse; rare enough to decode whole.
    if (this.keys.has(key)) return this.whole();
    this.keys.add(key);
    this.pos = close + 1;
    if (this.skipSpace() !== COLON) return this.whole();
    this.pos++;
    if (this.skipSpace() === OPEN_BRACKET) {
      this.beginArray(key);
      return 0;
    }
    const end = valueEnd(text, this.pos);
    if (end < 0) return this.whole();
    this.pos = end;
    this.phase = 'after-member';
    return 0;
  }

  /** After a member of the top-level object: the next one, or the object ends. */
  private afterMember(): number {
    const c = this.skipSpace();
    this.pos++;
    if (c === COMMA) this.phase = 'member';
    else if (c === CLOSE_BRACE) this.phase = 'end';
    else return this.whole();
    return 0;
  }

  /** An element of an array being split: skipped, to be decoded with its run. */
  private element(): number {
    const text = this.text;
    const c = this.skipSpace();
    // An empty element (`[1,,2]`, `[1,]`) is invalid JSON.
    if (c === COMMA || c === CLOSE_BRACKET || c === -1) return this.whole();
    const end = valueEnd(text, this.pos);
    if (end < 0) return this.whole();
    this.pos = end;
    this.runCount++;
    this.phase = 'after-element';
    return 0;
  }

  /** After an element: a run of elements long enough (or the array closing) is decoded. */
  private afterElement(): number {
    const text = this.text;
    const array = this.arrays[this.arrays.length - 1] as SplitArray;
    const c = text.at(this.pos);
    const closing = c === CLOSE_BRACKET;
    if (!closing && c !== COMMA) return this.whole();
    let decoded = 0;
    if (closing || this.pos - this.runStart >= RUN_CHARS) {
      decoded = this.pos - this.runStart;
      if (!this.decodeRun(array, this.pos)) return this.whole();
      this.runStart = this.pos + 1;
    }
    this.pos++;
    if (closing) {
      array.close = this.pos - 1;
      this.phase = this.topObject ? 'after-member' : 'end';
    } else this.phase = 'elements';
    return decoded;
  }

  /** After the top-level value: only spaces may follow; the pieces are assembled. */
  private end(): number {
    if (this.skipSpace() !== -1) return this.whole();
    return this.assemble();
  }

  /** Moves past spaces; answers the character there, or -1 at the end of the text. */
  private skipSpace(): number {
    const text = this.text;
    while (this.pos < text.length && isSpace(text.at(this.pos))) this.pos++;
    return this.pos < text.length ? text.at(this.pos) : -1;
  }

  private beginArray(key: string | undefined): void {
    const array: SplitArray = { key, open: this.pos, close: -1, items: [] };
    this.arrays.push(array);
    this.pos++;
    this.runStart = this.pos;
    this.runCount = 0;
    if (this.skipSpace() === CLOSE_BRACKET) {
      array.close = this.pos;
      this.pos++;
      this.phase = this.topObject ? 'after-member' : 'end';
    } else this.phase = 'elements';
  }

  /** Decodes the elements from `runStart` to `end` (a `,` or the closing `]`); false when they do not decode to `runCount` elements. */
  private decodeRun(array: SplitArray, end: number): boolean {
    let run: unknown;
    try {
      run = JSON.parse(`[${this.text.slice(this.runStart, end)}]`);
    } catch {
      return false;
    }
    if (!Array.isArray(run) || run.length !== this.runCount) return false;
    for (let i = 0; i < run.length; i++) array.items.push(run[i]);
    this.runCount = 0;
    return true;
  }

  /** The rest of the body, arrays cut out, decoded; then the arrays put back. */
  private assemble(): number {
    const text = this.text;
    let rest = '';
    let from = 0;
    for (const a of this.arrays) {
      rest += text.slice(from, a.open + 1);
      from = a.close;
    }
    rest += text.slice(from);
    let value: unknown;
    try {
      value = JSON.parse(rest);
    } catch {
      return this.whole();
    }
    if (!this.topObject) {
      this.finish({ ok: true, value: (this.arrays[0] as SplitArray).items });
      return rest.length;
    }
    for (const a of this.arrays) {
      const key = a.key as string;
      const slot = (value as Record<string, unknown>)[key];
      if (!Array.isArray(slot) || slot.length !== 0) return this.whole();
      // defineProperty: a key such as `__proto__` stays a plain member, as JSON.parse makes it.
      Object.defineProperty(value, key, { value: a.items, writable: true, enumerable: true, configurable: true });
    }
    this.finish({ ok: true, value });
    return rest.length;
  }

  /** Decodes the whole text at once: the answer (or error) of {@link parseJsonBody} exactly. */
  private whole(): number {
    // The size is known by now (counted, or small enough not to need counting).
    this.finish(parseJsonBody(this.text.text(), { maxBodyBytes: this.maxBytes }, this.bytes));
    return this.text.length;
  }

  private tooLarge(): void {
    this.finish({ ok: false, code: 'body_too_large', problems: [problem('$', `a body of at most ${this.maxBytes} bytes`, `${this.bytes} bytes`)] });
  }

  private finish(answer: JsonBodyResult): void {
    this.answer = answer;
    this.phase = 'done';
    this.arrays.length = 0;
  }
}

/**
 * Starts decoding a request body in slices (see the module's comment); `step` it until it answers
 * true, then read `result()`, the same answer as `parseJsonBody(text, options)`.
 *
 * @example
 * const body = startJsonBody(text, { maxBodyBytes });
 * while (!body.step(256 * 1024)) await new Promise((r) => setImmediate(r));
 * const decoded = body.result();
 */
export function startJsonBody(text: string, options: JsonBodyOptions = {}): JsonBodySteps {
  return new SlicedJsonBody(new TextSource(text), options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
}

/**
 * {@link startJsonBody} for a body given as its UTF-8 bytes: the same answer as
 * `parseJsonBody(Buffer.from(bytes).toString('utf8'), options)`, without ever making the text of
 * the whole body (see the module's comment). The bytes must not change until `step` answers true.
 */
export function startJsonBytes(bytes: Uint8Array, options: JsonBodyOptions = {}): JsonBodySteps {
  return new SlicedJsonBody(new ByteSource(bytes), options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, bytes.length);
}
