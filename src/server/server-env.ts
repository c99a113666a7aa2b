/**
 * What every part of the server is made with: the engine, the clock, the randomness, the channel,
 * and the options' scalars that several parts share, each with its default, resolved once so that
 * no two parts default one differently ({@link ServerEnv}); and, once the backend is chosen, the
 * kit the factories of the parts share ({@link BuildKit}).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import { DEFAULT_MAX_BODY_BYTES } from '../contract/limits.js';
import type { SecretKey } from '../events/hmac.js';
import type { RandomSource } from '../events/random.js';
import { systemClock } from '../runtime/system-clock.js';
import type { BackendEnv } from './backends/choose.js';
import type { ServerBackend } from './ports/server-backend.js';
import { createSimulatedChannel } from './channels/simulated.js';
import { cryptoRandom } from './crypto-random.js';
import type { DashboardState } from './dashboard/state.js';
import { deadLetterBounds } from './dead-letters.js';
import type { ServerMetrics } from './metrics.js';
import { DEFAULT_FAILURE_WINDOW_MS, type BuildServerOptions } from './options.js';
import type { Channel } from './ports/channel.js';

export interface ServerEnv {
  readonly engine: Engine;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly channel: Channel;
  /** Largest request body, in bytes (`limits.maxBodyBytes`). */
  readonly maxBodyBytes: number;
  /** Messages whose later statuses are followed (`maxTrackedMessages`). */
  readonly maxTracked: number;
  /** The period of campaign statistics batches, in ms (`campaignBatchIntervalMs`). */
  readonly batchIntervalMs: number;
  /** How long after a SENT a failure may still send a contact again, in ms (`failureWindowMs`). */
  readonly failureWindowMs: number;
  /** How long the period reports' data is kept, in ms (`reportRetentionMs`). */
  readonly reportRetentionMs: number;
  /** The key signing report download links. */
  readonly reportTokenKey: SecretKey;
  /** The key as text when the server made it (a durable backend keeps it); undefined when the host set it. */
  readonly madeReportTokenKey: string | undefined;
}

export function serverEnv(options: BuildServerOptions): ServerEnv {
  const random = options.random ?? cryptoRandom;
  const key = reportTokenKeyOf(options, random);
  return {
    engine: options.engine,
    clock: options.clock ?? systemClock,
    random,
    channel: options.channel ?? createSimulatedChannel(),
    maxBodyBytes: options.limits?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxTracked: options.maxTrackedMessages ?? 1_000_000,
    batchIntervalMs: options.campaignBatchIntervalMs ?? 60_000,
    failureWindowMs: options.failureWindowMs ?? DEFAULT_FAILURE_WINDOW_MS,
    reportRetentionMs: options.reportRetentionMs ?? 30 * 86_400_000,
    reportTokenKey: key.key,
    madeReportTokenKey: key.made,
  };
}

/**
 * The host's key, else the one the store kept, else a new one: the two last are the server's
 * own, kept by a durable backend.
 */
function reportTokenKeyOf(options: BuildServerOptions, random: RandomSource): { key: SecretKey; made: string | undefined } {
  if (options.reportTokenKey !== undefined) return { key: options.reportTokenKey, made: undefined };
  // The key signing download links outlives restarts when the server has a store.
  const stored = options.stored?.values.get('reportTokenKey');
  const key = typeof stored === 'string' ? Buffer.from(stored, 'base64') : random.randomBytes(32);
  return { key, made: Buffer.from(key).toString('base64') };
}

/** What the backend is made with (backends/choose.ts): the env's part of it, the log, the dead letters' bounds. */
export function backendEnv(env: ServerEnv, options: BuildServerOptions, log: FastifyBaseLogger): BackendEnv {
  const { clock, random, maxTracked, batchIntervalMs, failureWindowMs, madeReportTokenKey } = env;
  return { clock, random, log, maxTracked, batchIntervalMs, failureWindowMs, madeReportTokenKey, deadLetters: deadLetterBounds(options.deadLetters) };
}

/**
 * The server's metrics when they are on, read when a part counts: they are made after the parts
 * (server-metrics.ts says why), and nothing counts before `buildServer` returns.
 */
export type MetricsOf = () => ServerMetrics | undefined;

/** What the factories of the server's parts share, beside what each is given. */
export interface BuildKit {
  readonly env: ServerEnv;
  readonly options: BuildServerOptions;
  /** Where the state lives (ports/backend.ts), with the hooks the parts are made over (backends/server-backend.ts). */
  readonly backend: ServerBackend;
  readonly log: FastifyBaseLogger;
  readonly metrics: MetricsOf;
  /** What the operator dashboard keeps besides the engine's views; undefined when it is off. */
  readonly dashboard: DashboardState | undefined;
}
