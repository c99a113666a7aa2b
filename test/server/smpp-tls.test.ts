/**
 * The SMPP channel over TLS to an SMSC with a certificate of its own authority (the smpp package's
 * TLS server): the CA from `tlsCaFile` (no NODE_EXTRA_CA_CERTS), `tlsRejectUnauthorized`, a client
 * certificate from `tlsCertFile` / `tlsKeyFile` that the SMSC asks for and checks (mutual TLS),
 * and files that cannot be used refused when the channel is created, naming the option.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadSmpp, type SmppPdu, type SmppServer, type SmppSession } from '../../src/server/channels/smpp-package.js';
import { createSmppChannel, isServerOptionsError, type SmppChannelOptions, type SmppEvent } from '../../src/server/index.js';
import { waitFor } from './helpers.js';
import { outgoingSms, type Cleanup } from './smpp-smsc.js';

const cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

// --- certificates: a CA, the SMSC's certificate (for 127.0.0.1) and a client certificate ---------

const dir = mkdtempSync(join(tmpdir(), 'sendpool-smpp-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function issue(name: string, subject: string, extensions: string): void {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
  writeFileSync(file(`${name}.ext`), extensions);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`);
}
openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=sendpool test CA');
issue('smsc', '/CN=test smsc', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
issue('client', '/CN=sendpool-client', 'extendedKeyUsage=clientAuth\n');
writeFileSync(file('not-pem.txt'), 'this is not a certificate\n');

// --- a TLS SMSC on the package's server side ------------------------------------------------------

interface TlsSmsc {
  readonly port: number;
  readonly binds: number;
  /** Texts of the submit_sm read. */
  readonly texts: string[];
  /** Common name of the client certificate of each bound connection ('' without one). */
  readonly clientNames: string[];
}

async function startTlsSmsc(tls: Record<string, unknown> = {}): Promise<TlsSmsc> {
  const smpp = await loadSmpp();
  const createServer = smpp.createServer as unknown as (options: Record<string, unknown>, listener: (session: SmppSession) => void) => SmppServer;
  const state = { binds: 0, texts: [] as string[], clientNames: [] as string[] };
  const sessions = new Set<SmppSession>();
  const server = createServer({ key: readFileSync(file('smsc.key')), cert: readFileSync(file('smsc.pem')), ...tls }, (session) => {
    sessions.add(session);
    session.on('error', () => undefined);
    session.on('close', () => sessions.delete(session));
    session.on('bind_transceiver', (pdu: SmppPdu) => {
      state.binds++;
      const peer = (session.socket as TLSSocket).getPeerCertificate();
      state.clientNames.push(typeof peer.subject?.CN === 'string' ? peer.subject.CN : '');
      session.send(pdu.response({ system_id: 'tls-smsc' }));
    });
    session.on('submit_sm', (pdu: SmppPdu) => {
      state.texts.push((pdu['short_message'] as { message: string }).message);
      session.send(pdu.response({ message_id: String(state.texts.length) }));
    });
    session.on('enquire_link', (pdu: SmppPdu) => session.send(pdu.response()));
    session.on('unbind', (pdu: SmppPdu) => {
      session.send(pdu.response());
      session.close();
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanup.push(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as AddressInfo).port,
    get binds() {
      return state.binds;
    },
    texts: state.texts,
    clientNames: state.clientNames,
  };
}

function channelTo(smsc: TlsSmsc, options: Partial<SmppChannelOptions>) {
  const events: SmppEvent[] = [];
  const channel = createSmppChannel({
    host: '127.0.0.1',
    port: smsc.port,
    tls: true,
    systemId: 'sendpool',
    password: 'secret1',
    sourceAddr: 'SENDPOOL',
    reconnectBackoff: { minMs: 5, maxMs: 20 },
    onEvent: (e) => events.push(e),
    ...options,
  });
  cleanup.push(() => channel.close());
  channel.attach({ messageStatus: () => undefined, attendanceClosed: () => undefined, smsStatus: () => undefined, smsReply: () => undefined });
  return { channel, events };
}

const disconnects = (events: SmppEvent[]) => events.filter((e): e is Extract<SmppEvent, { type: 'disconnected' }> => e.type === 'disconnected');

describe('SMPP over TLS with files', () => {
  it('the SMSC of a private CA: refused without tlsCaFile, bound and sending with it (no NODE_EXTRA_CA_CERTS)', async () => {
    // This machine may name the system's CAs there; never the test's.
    expect(process.env['NODE_EXTRA_CA_CERTS'] ?? '').not.toContain(dir);
    const smsc = await startTlsSmsc();
    const refused = channelTo(smsc, {});
    await waitFor(() => disconnects(refused.events).length >= 2, 'two refused connections');
    expect(disconnects(refused.events)[0]?.reason).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(smsc.binds).toBe(0);

    const { channel } = channelTo(smsc, { tlsCaFile: file('ca.pem') });
    await channel.whenBound();
    expect(await channel.sendSms(outgoingSms(0, 'over TLS'))).toEqual({ status: 'sent' });
    expect(smsc.texts).toEqual(['over TLS']);
    expect(smsc.clientNames).toEqual(['']);
  });

  it('tlsRejectUnauthorized false accepts a certificate nothing vouches for', async () => {
    const smsc = await startTlsSmsc();
    const { channel } = channelTo(smsc, { tlsRejectUnauthorized: false });
    await channel.whenBound();
    expect(smsc.binds).toBe(1);
  });

  it('mutual TLS: an SMSC that asks for a client certificate binds the one from tlsCertFile / tlsKeyFile, refuses a channel without', async () => {
    const smsc = await startTlsSmsc({ requestCert: true, rejectUnauthorized: true, ca: readFileSync(file('ca.pem')) });
    const without = channelTo(smsc, { tlsCaFile: file('ca.pem') });
    await waitFor(() => disconnects(without.events).length >= 2, 'two refused connections');
    expect(smsc.binds).toBe(0);
    await without.channel.close();

    const { channel } = channelTo(smsc, { tlsCaFile: file('ca.pem'), tlsCertFile: file('client.pem'), tlsKeyFile: file('client.key') });
    await channel.whenBound();
    expect(await channel.sendSms(outgoingSms(0, 'mutual'))).toEqual({ status: 'sent' });
    expect(smsc.clientNames).toEqual(['sendpool-client']);
  });

  it('files that cannot be used are refused when the channel is created, naming the option and the file, never the key', () => {
    const base = { host: '127.0.0.1', tls: true, systemId: 'sendpool', password: 'secret1', sourceAddr: 'S' };
    const refusal = (options: Partial<SmppChannelOptions>): string => {
      try {
        createSmppChannel({ ...base, ...options });
      } catch (e) {
        expect(isServerOptionsError(e)).toBe(true);
        return (e as Error).message;
      }
      throw new Error('not refused');
    };
    const missing = file('missing.pem');
    expect(refusal({ tlsCaFile: missing, tlsCertFile: missing, tlsKeyFile: file('client.key') })).toBe(
      `Invalid server options: smpp.tlsCaFile: expected a readable file, got ${JSON.stringify(missing)} (ENOENT); smpp.tlsCertFile: expected a readable file, got ${JSON.stringify(missing)} (ENOENT)`,
    );
    expect(refusal({ tlsCaFile: file('not-pem.txt') })).toMatch(/^Invalid server options: smpp\.tlsCaFile: expected PEM certificates, got ".*not-pem\.txt" \(OpenSSL: no start line\)$/);
    expect(refusal({ tlsCertFile: file('not-pem.txt'), tlsKeyFile: file('client.key') })).toMatch(/^Invalid server options: smpp\.tlsCertFile: expected a PEM certificate, got /);
    const keyAsKey = refusal({ tlsCertFile: file('client.pem'), tlsKeyFile: file('client.pem') });
    expect(keyAsKey).toMatch(/^Invalid server options: smpp\.tlsKeyFile: expected a PEM private key \(not encrypted\), got /);
    const mismatch = refusal({ tlsCertFile: file('client.pem'), tlsKeyFile: file('smsc.key') });
    expect(mismatch).toMatch(/^Invalid server options: smpp\.tlsKeyFile: expected the private key of the certificate in tlsCertFile, got ".*smsc\.key" \(the key of another certificate\)$/);
    const key = readFileSync(file('smsc.key'), 'utf8');
    for (const message of [keyAsKey, mismatch]) {
      expect(message).not.toContain('PRIVATE KEY');
      expect(message).not.toContain(key.split('\n')[1]!);
    }
  });

  it('TLS file options are checked with the others: only with tls, a certificate with its key', () => {
    expect(() => createSmppChannel({ host: 'h', systemId: 's', password: '', sourceAddr: 'S', tlsCaFile: 'ca.pem', tlsKeyFile: '', tlsRejectUnauthorized: 'no' as unknown as boolean })).toThrow(
      'Invalid server options: smpp.tlsCaFile: expected a file only with tls: true (at the top level or for an account in smscs), got "ca.pem" (string); smpp.tlsKeyFile: expected a string of 1 to 4096 characters, got "" (string); smpp.tlsKeyFile: expected a file only with tls: true (at the top level or for an account in smscs), got "" (string); smpp.tlsCertFile: expected a file with tlsKeyFile (a client certificate needs both), got missing; smpp.tlsRejectUnauthorized: expected true or false, got "no" (string)',
    );
  });
});
