/**
 * Connect-time address check for webhook targets. The contract's URL policy checks the URL's
 * text, but a public name can resolve to a private address (DNS rebinding): this `lookup`, given to
 * `http.request`, refuses such an address at connect time unless private targets are allowed.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { classifyHost } from '../../contract/url-policy.js';
import { WebhookAttemptError } from './answer.js';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function refused(address: string): WebhookAttemptError {
  return new WebhookAttemptError(`refused to connect to non-public address ${address}`, 'EADDRNOTPUBLIC');
}

/** A `lookup` for `http.request` that refuses non-public addresses (all of them when `allowPrivate`, none). */
export function safeLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses;
      for (const a of list) {
        const host = isIP(a.address) === 6 ? `[${a.address}]` : a.address;
        const kind = classifyHost(host);
        if (kind === 'metadata' || (!allowPrivate && kind !== 'public')) return callback(refused(a.address), []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (first === undefined) return callback(refused(hostname), []);
      callback(null, first.address, first.family);
    });
  };
}
