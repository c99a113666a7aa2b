/**
 * `sendpool serve --sms-channel smpp`: the SMPP options from a file and SENDPOOL_SMPP_* variables,
 * checked before anything starts (the password never echoed), and a real server process sending
 * SMS to a local SMSC.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processIo, type Io } from '../../src/cli/io.js';
import { serveSettings } from '../../src/cli/serve-flags.js';
import { api, waitFor } from '../server/helpers.js';
import { startFakeSmsc } from '../server/smpp-smsc.js';
import { BIN, ROOT, scratch, sendpool, startServe } from './helpers.js';

const API_KEY = 'cli-serve-smpp-test-key-company-1';
const PASSWORD = 'pw-9x7q';
const fleet = 'examples/fleet.json';
const dir = scratch({
  'smpp.json': { host: '127.0.0.1', port: 1, systemId: 'sendpool', sourceAddr: 'SENDPOOL', window: 20 },
  'bad.json': { host: 'a b', port: 70000, systemId: 'sendpool', sourceAddr: '', password: 'this-password-is-far-too-long-for-smpp-and-is-refused-by-the-check-0123', windw: 3 },
  'not-json.json': '{ host: ',
});

const settings = (values: Record<string, string | boolean>, env: Record<string, string> = {}, io: Io = processIo) => serveSettings(values, io, env);

describe('serve --sms-channel: flags and configuration', () => {
  it('simulated by default; smpp takes the file and the variables, a variable winning', () => {
    expect(settings({}).options['smpp']).toBeUndefined();
    expect(settings({ 'sms-channel': 'simulated' }).options['smpp']).toBeUndefined();
    const smpp = settings({ 'sms-channel': 'smpp', 'smpp-config': join(dir, 'smpp.json') }, { SENDPOOL_SMPP_PASSWORD: PASSWORD, SENDPOOL_SMPP_WINDOW: '64' }).options['smpp'];
    expect(smpp).toEqual({ host: '127.0.0.1', port: 1, systemId: 'sendpool', sourceAddr: 'SENDPOOL', window: 64, password: PASSWORD });
    // Everything from the environment, no file.
    const env = {
      SENDPOOL_SMPP_HOST: 'smsc.example.net',
      SENDPOOL_SMPP_PORT: '2775',
      SENDPOOL_SMPP_SYSTEM_ID: 'acct',
      SENDPOOL_SMPP_PASSWORD: PASSWORD,
      SENDPOOL_SMPP_SOURCE_ADDR: '5511300000000',
      SENDPOOL_SMPP_TLS: 'true',
    };
    expect(settings({ 'sms-channel': 'smpp' }, env).options['smpp']).toEqual({ host: 'smsc.example.net', port: 2775, systemId: 'acct', password: PASSWORD, sourceAddr: '5511300000000', tls: true });
  });

  it.each([
    [{ 'sms-channel': 'whatsapp' }, {}, ['--sms-channel: expected one of simulated, smpp, got "whatsapp"']],
    [{ 'smpp-config': 'x.json' }, {}, ['--smpp-config: needs --sms-channel smpp']],
    [
      { 'sms-channel': 'smpp' },
      {},
      [
        'the SMPP configuration: $.host (or SENDPOOL_SMPP_HOST): expected a string of 1 to 253',
        '$.password (or SENDPOOL_SMPP_PASSWORD): expected a string of 0 to 64 characters, got missing',
        'variables read: SENDPOOL_SMPP_HOST',
      ],
    ],
    [
      { 'sms-channel': 'smpp', 'smpp-config': join(dir, 'bad.json') },
      {},
      [
        `${join(dir, 'bad.json')}: $.windw: expected one of the SMPP options`,
        'got an option sendpool does not know',
        `${join(dir, 'bad.json')}: $.host: expected a string of 1 to 253 characters without spaces or slashes, got "a b" (string)`,
        `${join(dir, 'bad.json')}: $.port: expected an integer from 1 to 65535, got 70000 (number)`,
        `${join(dir, 'bad.json')}: $.password: expected a string of 0 to 64 characters, got a string of 71 characters`,
      ],
    ],
    [
      { 'sms-channel': 'smpp', 'smpp-config': join(dir, 'smpp.json') },
      { SENDPOOL_SMPP_PORT: 'abc', SENDPOOL_SMPP_PASSWORD: PASSWORD },
      ['SENDPOOL_SMPP_PORT: expected an integer from 1 to 65535, got "abc" (string)'],
    ],
    [{ 'sms-channel': 'smpp', 'smpp-config': join(dir, 'not-json.json') }, {}, [`${join(dir, 'not-json.json')}: expected a JSON object, got not JSON`]],
    [{ 'sms-channel': 'smpp', 'smpp-config': join(dir, 'missing.json') }, {}, [`--smpp-config ${join(dir, 'missing.json')}: cannot read: no such file`]],
  ])('%j is refused naming the flag, file path or variable', (values, env, parts) => {
    let message = '';
    try {
      settings(values, env);
    } catch (e) {
      message = String(e);
    }
    for (const part of parts) expect(message).toContain(part);
    expect(message).not.toContain('far-too-long');
    expect(message).not.toContain(PASSWORD);
  });

  it('the wire and TLS options come from the file; the TLS files also from SENDPOOL_SMPP_TLS_*_FILE, which win', () => {
    const file = {
      host: 'smsc.example.net',
      tls: true,
      systemId: 'acct',
      sourceAddr: 'ACME',
      interfaceVersion: 0x50,
      gsm7DataCoding: 1,
      concatenation: 'sar',
      tlsCaFile: '/etc/smpp/ca.pem',
      tlsCertFile: '/etc/smpp/client.pem',
      tlsKeyFile: '/etc/smpp/client.key',
      tlsRejectUnauthorized: false,
    };
    const config = scratch({ 'tls.json': file });
    const env = { SENDPOOL_SMPP_PASSWORD: PASSWORD, SENDPOOL_SMPP_TLS_CA_FILE: '/run/secrets/ca.pem', SENDPOOL_SMPP_TLS_KEY_FILE: '/run/secrets/client.key' };
    expect(settings({ 'sms-channel': 'smpp', 'smpp-config': join(config, 'tls.json') }, env).options['smpp']).toEqual({
      ...file,
      password: PASSWORD,
      tlsCaFile: '/run/secrets/ca.pem',
      tlsKeyFile: '/run/secrets/client.key',
    });
    const fromEnv = {
      SENDPOOL_SMPP_HOST: 'smsc.example.net',
      SENDPOOL_SMPP_TLS: 'true',
      SENDPOOL_SMPP_SYSTEM_ID: 'acct',
      SENDPOOL_SMPP_PASSWORD: PASSWORD,
      SENDPOOL_SMPP_SOURCE_ADDR: 'ACME',
      SENDPOOL_SMPP_TLS_CA_FILE: 'ca.pem',
      SENDPOOL_SMPP_TLS_CERT_FILE: 'client.pem',
      SENDPOOL_SMPP_TLS_KEY_FILE: 'client.key',
    };
    expect(settings({ 'sms-channel': 'smpp' }, fromEnv).options['smpp']).toMatchObject({ tls: true, tlsCaFile: 'ca.pem', tlsCertFile: 'client.pem', tlsKeyFile: 'client.key' });
  });

  it('bad wire and TLS options are named by the file path or the variable', () => {
    const config = scratch({
      'bad-opts.json': {
        host: 'h',
        systemId: 's',
        password: '',
        sourceAddr: 'S',
        interfaceVersion: '0x34',
        gsm7DataCoding: 8,
        concatenation: 'concat',
        tlsCertFile: 'c.pem',
        tlsRejectUnauthorized: 'no',
      },
    });
    const bad = join(config, 'bad-opts.json');
    let message = '';
    try {
      settings({ 'sms-channel': 'smpp', 'smpp-config': bad }, { SENDPOOL_SMPP_TLS_CA_FILE: 'ca.pem' });
    } catch (e) {
      message = String(e);
    }
    for (const part of [
      `${bad}: $.interfaceVersion: expected an integer from 0 to 255, got "0x34" (string)`,
      `${bad}: $.gsm7DataCoding: expected 0 (SMSC default alphabet) or 1 (IA5/ASCII), got 8 (number)`,
      `${bad}: $.concatenation: expected 'udh', 'sar' or 'payload', got "concat" (string)`,
      `SENDPOOL_SMPP_TLS_CA_FILE: expected a file only with tls: true (at the top level or for an account in smscs), got "ca.pem" (string)`,
      `${bad}: $.tlsCertFile: expected a file only with tls: true`,
      `${bad}: $.tlsKeyFile (or SENDPOOL_SMPP_TLS_KEY_FILE): expected a file with tlsCertFile (a client certificate needs both), got missing`,
      `${bad}: $.tlsRejectUnauthorized: expected true or false, got "no" (string)`,
    ]) {
      expect(message).toContain(part);
    }
  });

  it('a bind pool from the file: accounts in smscs, each problem named by its JSON path', () => {
    const config = scratch({
      'pool.json': {
        systemId: 'sendpool',
        password: PASSWORD,
        sourceAddr: 'SENDPOOL',
        tps: 100,
        smscs: [
          { name: 'primary', host: 'smsc-a.example.net', binds: 2, priority: 0 },
          { name: 'backup', host: 'smsc-b.example.net', tls: true, bindMode: 'split', receiverBinds: 1, priority: 1, tps: 20 },
        ],
      },
      'bad-pool.json': {
        systemId: 'sendpool',
        password: PASSWORD,
        sourceAddr: 'SENDPOOL',
        smscs: [
          { name: 'a', binds: 0 },
          { name: 'a', host: 'h', bindMode: 'both', color: 'red' },
        ],
      },
    });
    const ok = settings({ 'sms-channel': 'smpp', 'smpp-config': join(config, 'pool.json') }, {});
    expect(ok.notes).toContain('SMS go over SMPP to smsc-a.example.net:2775, smsc-b.example.net:3550 (TLS)');
    const bad = join(config, 'bad-pool.json');
    let message = '';
    try {
      settings({ 'sms-channel': 'smpp', 'smpp-config': bad }, {});
    } catch (e) {
      message = String(e);
    }
    for (const part of [
      `${bad}: $.smscs[0].host: expected a string of 1 to 253 characters without spaces or slashes, got missing (nor is it set at the top level)`,
      `${bad}: $.smscs[0].binds: expected an integer from 1 to 64, got 0 (number)`,
      `${bad}: $.smscs[1].color: expected one of name, host,`,
      `${bad}: $.smscs[1].bindMode: expected 'transceiver' or 'split', got "both" (string)`,
      `${bad}: $.smscs[1].name: expected a name no other account has (smscs[0] is "a")`,
    ]) {
      expect(message).toContain(part);
    }
    expect(message).not.toContain(PASSWORD);
  });

  it('a TLS file that cannot be read stops serve with exit 2, naming the option and the file', () => {
    const config = scratch({ 'tls-missing.json': { host: '127.0.0.1', port: 1, tls: true, systemId: 'sendpool', password: PASSWORD, sourceAddr: 'SENDPOOL' } });
    const missing = join(config, 'no-such-ca.pem');
    const r = spawnSync(process.execPath, [BIN, 'serve', fleet, '--memory', '--port', '0', '--sms-channel', 'smpp', '--smpp-config', join(config, 'tls-missing.json')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, SENDPOOL_API_KEYS: `1:${API_KEY}`, SENDPOOL_SMPP_TLS_CA_FILE: missing },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`smpp.tlsCaFile: expected a readable file, got ${JSON.stringify(missing)} (ENOENT)`);
    expect(r.stderr).not.toContain(PASSWORD);
  });

  it('a bad configuration exits 2 before anything starts', () => {
    const r = sendpool('serve', fleet, '--memory', '--sms-channel', 'smpp', '--smpp-config', join(dir, 'bad.json'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.port: expected an integer from 1 to 65535');
    expect(r.stderr).not.toContain('far-too-long');
  });
});

describe('sendpool serve --sms-channel smpp', () => {
  it('sends the SMS of POST /sms/messages/ to the SMSC, bound with the password from the environment', async () => {
    const smsc = await startFakeSmsc({ password: PASSWORD, autoReceipt: () => 'DELIVRD' });
    const config = scratch({ 'smpp.json': { host: '127.0.0.1', port: smsc.port, systemId: 'sendpool', sourceAddr: 'SENDPOOL' } });
    const serving = await startServe([fleet, '--port', '0', '--memory', '--sms-channel', 'smpp', '--smpp-config', join(config, 'smpp.json')], {
      SENDPOOL_API_KEYS: `1:${API_KEY}`,
      SENDPOOL_SMPP_PASSWORD: PASSWORD,
    });
    try {
      const res = await api(serving.url, '/sms/messages/', {
        key: API_KEY,
        body: [
          { message: 'Olá! Seu código é 4321', phone: '5511987654321' },
          { message: 'x'.repeat(200), phone: '5511987654322' },
        ],
      });
      expect(res.status).toBe(202);
      expect(res.json).toMatchObject({ accepted: 2, parts: 3 });
      await waitFor(() => smsc.accepted.length === 3, 'three parts at the SMSC');
      expect(smsc.binds).toEqual([{ systemId: 'sendpool', password: PASSWORD, ok: true, kind: 'transceiver', interfaceVersion: 0x34 }]);
      expect(smsc.accepted.find((a) => a.destination === '5511987654321')).toMatchObject({ text: 'Olá! Seu código é 4321', dataCoding: 8 });
      expect(serving.stderr()).toContain(`note: SMS go over SMPP to 127.0.0.1:${smsc.port}\n`);
      expect(serving.stderr()).not.toContain(PASSWORD);
    } finally {
      expect(await serving.stop()).toBe(0);
      await smsc.close();
    }
  });
});
