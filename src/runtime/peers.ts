/**
 * sendpool's optional peer packages (package.json's `peerDependenciesMeta`), loaded only by the
 * feature that needs one, so a host that does not use the feature need not install the package.
 * Every feature says a missing peer the same way: a {@link MissingPeerError} naming the package,
 * the feature and the install command. Any other failure while loading (a broken install, a
 * version without what sendpool calls) is rethrown as it is.
 */
import { createRequire } from 'node:module';

/** The optional peers and the versions sendpool works with (package.json's `peerDependencies`, checked by a test). */
export const PEER_RANGES = {
  fastify: '^5.0.0',
  ioredis: '^5.0.0 || ^6.0.0',
  libsql: '^0.5.29',
  'prom-client': '^15.0.0',
  smpp: '^0.5.1',
  undici: '^6.21.0 || ^7.0.0',
} as const;

export type PeerName = keyof typeof PEER_RANGES;

const MISSING_PEER = Symbol.for('sendpool.MissingPeerError');

/** A feature was asked for whose optional package is not installed. */
export class MissingPeerError extends Error {
  /** The package to install, e.g. `prom-client`. */
  readonly peer: PeerName;
  /** What needed it, e.g. `The server's metrics`. */
  readonly feature: string;
  /** What to run, e.g. `npm install prom-client@"^15.0.0"`. */
  readonly install: string;

  /**
   * @param peer the package
   * @param feature what needed it
   * @param options.hint what else avoids the package (an option that turns the feature off); none by default
   * @param options.cause the loading error
   */
  constructor(peer: PeerName, feature: string, options: { hint?: string; cause?: unknown } = {}) {
    const install = `npm install ${peer}@"${PEER_RANGES[peer]}"`;
    super(`${feature} needs the optional package "${peer}": ${install}${options.hint === undefined ? '' : `, ${options.hint}`}`, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'MissingPeerError';
    this.peer = peer;
    this.feature = feature;
    this.install = install;
    Object.defineProperty(this, MISSING_PEER, { value: true });
  }
}

/** True when `e` is a {@link MissingPeerError}, from this copy of sendpool or another. */
export function isMissingPeerError(e: unknown): e is MissingPeerError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[MISSING_PEER] === true;
}

/** True when `e` says the package `peer` itself could not be found (not a module inside it, not another failure). */
function isNotFound(e: unknown, peer: string): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${peer}'`) || message.includes(`"${peer}"`));
}

/**
 * `e` as a {@link MissingPeerError} when it says `peer` is not installed (for a module of sendpool's
 * own that imports the peer); otherwise `e` as it is.
 */
export function peerError(e: unknown, peer: PeerName, feature: string, hint?: string): unknown {
  return isNotFound(e, peer) ? new MissingPeerError(peer, feature, { cause: e, ...(hint === undefined ? {} : { hint }) }) : e;
}

/** Imports an optional peer for `feature` (an ES module's namespace, or a CommonJS module's as Node gives it). */
export async function loadPeer<T>(peer: PeerName, feature: string, hint?: string): Promise<T> {
  try {
    return (await import(peer)) as T;
  } catch (e) {
    throw peerError(e, peer, feature, hint);
  }
}

/** Requires an optional CommonJS peer for `feature` at once (for a caller that cannot wait, such as `buildServer`). */
export function requirePeer<T>(peer: PeerName, feature: string, hint?: string): T {
  try {
    return createRequire(import.meta.url)(peer) as T;
  } catch (e) {
    throw peerError(e, peer, feature, hint);
  }
}
