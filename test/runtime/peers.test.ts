/**
 * Optional peers are loaded by the feature that needs one, and a missing one is said the same way
 * everywhere: a MissingPeerError naming the package, the feature and the install command, with the
 * versions package.json declares. Any other failure while loading is not turned into one.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MissingPeerError, PEER_RANGES, isMissingPeerError, loadPeer, peerError, requirePeer } from '../../src/runtime/peers.js';

describe('optional peers', () => {
  it('declares the versions package.json declares, every peer optional', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(PEER_RANGES).toEqual(pkg.peerDependencies);
    for (const name of Object.keys(PEER_RANGES)) expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
  });

  it('loads an installed peer, by import and by require', async () => {
    const undici = await loadPeer<{ request: unknown }>('undici', 'A test');
    expect(typeof undici.request).toBe('function');
    expect(typeof requirePeer<{ register: unknown }>('prom-client', 'A test').register).toBe('object');
  });

  it('says a missing peer with its name, the feature, the command and a hint, branded across copies', () => {
    const notFound = Object.assign(new Error("Cannot find package 'smpp' imported from /app/x.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    const e = peerError(notFound, 'smpp', 'The SMPP channel', "or sms: 'simulated'");
    expect(e).toBeInstanceOf(MissingPeerError);
    expect(isMissingPeerError(e)).toBe(true);
    expect((e as MissingPeerError).message).toBe(`The SMPP channel needs the optional package "smpp": npm install smpp@"^0.5.1", or sms: 'simulated'`);
    expect((e as MissingPeerError).cause).toBe(notFound);
    expect(isMissingPeerError({ ...(e as object), [Symbol.for('sendpool.MissingPeerError')]: true })).toBe(true);
    expect(isMissingPeerError(new Error('x'))).toBe(false);
  });

  it('leaves other failures as they are: a module inside the peer missing, or any other error', () => {
    const inner = Object.assign(new Error("Cannot find module './lib/x.js' imported from /node_modules/smpp/index.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(peerError(inner, 'smpp', 'The SMPP channel')).toBe(inner);
    const broken = new SyntaxError('Unexpected token');
    expect(peerError(broken, 'smpp', 'The SMPP channel')).toBe(broken);
  });
});
