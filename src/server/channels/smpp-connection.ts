/**
 * One TCP (or TLS) connection to the SMSC as the channel uses it: PDUs written as octets, PDUs
 * read as whole frames (smpp-frames.ts), sequence numbers, and the answers the channel waits for
 * on the rare requests (bind, `enquire_link`, `unbind`). What the frames mean is the link's and
 * the channel's business; this file only moves octets and keeps the numbering.
 *
 * Answers written in one turn of the event loop go out in one write (cork until the next tick):
 * the answers to the `deliver_sm` of one read leave together.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { createSecureContext, connect as tlsConnect, type SecureContext } from 'node:tls';
import type { Problem } from '../../core/problems.js';
import { ServerOptionsError } from '../ports/errors.js';
import { PduFramer, isSmppFrameError } from './smpp-frames.js';
import type { ResolvedSmppOptions } from './smpp-options.js';

/** Where the connection goes. */
export interface SmppAddress {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** TLS: refuse a certificate that does not chain to a trusted authority or name the host. @default true */
  readonly tlsRejectUnauthorized?: boolean;
  /** TLS: the CA and client certificate read from the option's files ({@link withSmppTlsFiles}). @default Node's CAs, no client certificate */
  readonly tlsContext?: SecureContext;
}

/**
 * The options with the TLS files (`tlsCaFile`, `tlsCertFile`, `tlsKeyFile`) read, once, into a
 * secure context every connection uses. A file that cannot be read or is not what its option says
 * throws a {@link ServerOptionsError} naming the option and the file (never its contents).
 */
export function withSmppTlsFiles<O extends ResolvedSmppOptions>(o: O): O & { readonly tlsContext?: SecureContext } {
  if (!o.smscs.some((smsc) => smsc.tls) || (o.tlsCaFile === '' && o.tlsCertFile === '')) return o;
  const problems: Problem[] = [];
  const read = (option: 'tlsCaFile' | 'tlsCertFile' | 'tlsKeyFile'): Buffer | undefined => {
    const path = o[option];
    if (path === '') return undefined;
    try {
      return readFileSync(path);
    } catch (e) {
      problems.push(fileProblem(option, path, 'a readable file', (e as NodeJS.ErrnoException).code ?? (e as Error).message));
      return undefined;
    }
  };
  const ca = read('tlsCaFile');
  const cert = read('tlsCertFile');
  const key = read('tlsKeyFile');
  if (problems.length > 0) throw new ServerOptionsError(problems);
  // Each file alone, so a problem names its option; then the key against its certificate.
  const check = (option: 'tlsCaFile' | 'tlsCertFile' | 'tlsKeyFile', expected: string, test: () => void): void => {
    try {
      test();
    } catch (e) {
      problems.push(fileProblem(option, o[option], expected, openSslReason(e)));
    }
  };
  let certificate: X509Certificate | undefined;
  let privateKey: KeyObject | undefined;
  if (ca) check('tlsCaFile', 'PEM certificates', () => new X509Certificate(ca));
  if (cert) check('tlsCertFile', 'a PEM certificate', () => (certificate = new X509Certificate(cert)));
  if (key) check('tlsKeyFile', 'a PEM private key (not encrypted)', () => (privateKey = createPrivateKey(key)));
  if (certificate && privateKey && !certificate.checkPrivateKey(privateKey)) {
    problems.push(fileProblem('tlsKeyFile', o.tlsKeyFile, 'the private key of the certificate in tlsCertFile', 'the key of another certificate'));
  }
  if (problems.length > 0) throw new ServerOptionsError(problems);
  return { ...o, tlsContext: createSecureContext({ ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}) }) };
}

function fileProblem(option: string, path: string, expected: string, actual: string): Problem {
  const where = `smpp.${option}`;
  const got = `${JSON.stringify(path)} (${actual})`;
  return { path: where, expected, actual: got, message: `${where}: expected ${expected}, got ${got}` };
}

/** OpenSSL's reason (`no start line`, `key values mismatch`), never the file's contents. */
function openSslReason(e: unknown): string {
  const err = e as { reason?: unknown; code?: unknown; message?: unknown };
  if (typeof err.reason === 'string') return `OpenSSL: ${err.reason}`;
  return typeof err.code === 'string' ? err.code : String(err.message);
}

/** What the connection tells its owner. */
export interface SmppConnectionEvents {
  /** Connected (TLS: after the handshake): the bind may go. */
  open(): void;
  /** One whole PDU; the buffer is valid during the call only. */
  frame(frame: Buffer): void;
  /** The connection is gone; `reason` is why, when known (an error code, or the stream out of step). */
  closed(reason: string): void;
}

export class SmppConnection {
  readonly socket: Socket;
  #sequence = 0;
  readonly #waiting = new Map<number, (status: number) => void>();
  readonly #framer = new PduFramer();
  #uncorkQueued = false;
  #error = '';
  #dropReason = '';

  constructor(address: SmppAddress, events: SmppConnectionEvents) {
    // TLS: the server name is the host's when it is a name (SNI carries no IP address).
    const socket = address.tls
      ? tlsConnect({
          host: address.host,
          port: address.port,
          ...(isIP(address.host) === 0 ? { servername: address.host } : {}),
          ...(address.tlsContext ? { secureContext: address.tlsContext } : {}),
          rejectUnauthorized: address.tlsRejectUnauthorized ?? true,
        })
      : netConnect({ host: address.host, port: address.port });
    this.socket = socket;
    socket.once(address.tls ? 'secureConnect' : 'connect', () => {
      // PDUs are written in batches (cork/uncork): Nagle's delay would only hold answers back.
      socket.setNoDelay(true);
      events.open();
    });
    const onFrame = (frame: Buffer) => events.frame(frame);
    socket.on('data', (chunk: Buffer) => {
      try {
        this.#framer.push(chunk, onFrame);
      } catch (e) {
        if (!isSmppFrameError(e)) throw e;
        // A length that cannot be: nothing after it can be cut into PDUs. Start over.
        this.destroy(`unreadable PDU: ${e.message}`);
      }
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      this.#error ||= e.code ?? e.message;
    });
    socket.on('close', () => events.closed(this.#dropReason || this.#error));
  }

  /** The next sequence number (1 to 0x7FFFFFFF, then 1 again). */
  nextSequence(): number {
    this.#sequence = this.#sequence >= 0x7fffffff ? 1 : this.#sequence + 1;
    return this.#sequence;
  }

  /** Writes a PDU; false when the connection can no longer be written (nothing was written). */
  write(pdu: Buffer): boolean {
    if (!this.socket.writable) return false;
    this.socket.write(pdu);
    return true;
  }

  /**
   * Writes a request numbered `sequence` and calls `onAnswer` with the status of its response (or
   * of a `generic_nack` with its number). False when not written.
   */
  request(pdu: Buffer, sequence: number, onAnswer: (status: number) => void): boolean {
    if (!this.write(pdu)) return false;
    this.#waiting.set(sequence, onAnswer);
    return true;
  }

  /** A response came to a request made with {@link request}: true when one waited for it. */
  answered(sequence: number, status: number): boolean {
    const waiting = this.#waiting.get(sequence);
    if (!waiting) return false;
    this.#waiting.delete(sequence);
    waiting(status);
    return true;
  }

  /** Writes an answer; the answers of one turn leave in one write. */
  answer(pdu: Buffer): void {
    const socket = this.socket;
    if (!socket.writable) return;
    if (!this.#uncorkQueued) {
      this.#uncorkQueued = true;
      socket.cork();
      process.nextTick(() => {
        this.#uncorkQueued = false;
        socket.uncork();
      });
    }
    socket.write(pdu);
  }

  /** Corks the socket while `write` runs: the PDUs written leave in one write. */
  batch(write: () => void): void {
    this.socket.cork();
    try {
      write();
    } finally {
      this.socket.uncork();
    }
  }

  /** Ends the connection after what is written (the `unbind_resp`, the `unbind`). */
  end(): void {
    this.socket.end();
  }

  /** Drops the connection now; `reason` is what `closed` says (rather than the socket's error, if any). */
  destroy(reason?: string): void {
    if (reason) this.#dropReason ||= reason;
    this.socket.destroy();
  }
}
