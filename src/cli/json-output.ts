/**
 * The documented `--json` shapes (docs/cli.md). Times are milliseconds from the start of the send
 * (`…Ms`), with the same value formatted for people beside them where useful. Fields are never
 * omitted: unknown or not applicable is null.
 */
import type { ForecastLimit } from '../core/forecast.js';

/** The pool a command was asked about. */
export interface PoolJson {
  readonly fleet: string;
  readonly businessId: number;
  readonly businessName: string;
  readonly typeId: number;
  readonly typeName: string;
  readonly messages: number;
}

export interface EventJson {
  readonly atMs: number;
  readonly at: string;
  readonly event: string;
}

/** One number in the `--json` of forecast and simulate. */
export interface NumberRowJson {
  readonly phone: string;
  readonly throughputPerHour: number;
  readonly messagingLimit24h: number;
  readonly messagesPerSecond: number | null;
  readonly sent: number;
  /** sent / messages, four decimals. */
  readonly share: number;
  /** First time its 24 h messaging limit was used up; null if never (before completion). */
  readonly ranOutAtMs: number | null;
}

/** `sendpool forecast --json`. */
export interface ForecastJson extends PoolJson {
  readonly command: 'forecast';
  readonly events: readonly EventJson[];
  /** Sum of `throughputPerHour` over the pool's numbers at the start. */
  readonly throughputPerHour: number;
  /** What the pool may send at once at the start (full buckets). */
  readonly outputAtStart: number;
  readonly completed: boolean;
  readonly completionMs: number | null;
  readonly completion: string | null;
  readonly sent: number;
  /** Why an incomplete forecast stops: "horizon", "no-number", "no-template"; null when completed. */
  readonly stoppedBy: string | null;
  /** Hour by hour: what the pool sends in [fromMs, fromMs + 1 h). */
  readonly hours: readonly { readonly hour: number; readonly fromMs: number; readonly sent: number; readonly total: number; readonly limitedBy24h: number }[];
  readonly numbers: readonly (NumberRowJson & {
    readonly phases: readonly { readonly limit: ForecastLimit; readonly fromMs: number; readonly toMs: number }[];
  })[];
}

/** `sendpool simulate --json`. */
export interface SimulateJson extends PoolJson {
  readonly command: 'simulate';
  readonly events: readonly (EventJson & { readonly throughputPerHour: number })[];
  readonly throughputPerHour: number;
  readonly completed: boolean;
  readonly completionMs: number | null;
  readonly completion: string | null;
  readonly sent: number;
  /** Why an incomplete run stops: "horizon", "no-number", "no-template", "no-capacity"; null when completed. */
  readonly stoppedBy: string | null;
  /** The forecast's completion for the same inputs, and the relative difference (null if either did not complete). */
  readonly forecastCompletionMs: number | null;
  readonly forecastDifference: number | null;
  readonly numbers: readonly NumberRowJson[];
  readonly templates: readonly {
    readonly id: number;
    readonly name: string;
    readonly sent: number;
    readonly share: number;
    /** First time it left the pool (paused or disabled); null if never. */
    readonly ranOutAtMs: number | null;
  }[];
  /** Path of the SVG written, or null. */
  readonly chart: string | null;
  /** How the run went: polls of the dispatch loop and wall time (varies between runs). */
  readonly run: { readonly polls: number; readonly wallMs: number };
}
