/**
 * `reason` of a FAILED notification (spec 7.1): "provider label, numeric code, description", built
 * from the dispatch queue's error table so the text a receiver sees and the action the queue took
 * come from one catalog (`CHANNEL_ERRORS`, listed in docs/events.md).
 */
import { failureReason } from '../core/channel-errors.js';
import { requireInteger, requireText } from './ids.js';

/**
 * Why a send failed, as the host knows it: a channel error code (the description and provider
 * default to the catalog's), or a ready-made reason string for failures that have no code.
 */
export type SendFailure =
  | {
      /** The channel's numeric error code, e.g. 131026. */
      readonly code: number;
      /** Overrides the catalog's description. @default the catalog's, or "Unknown error" */
      readonly description?: string;
      /** Overrides the provider label. @default the catalog's, or "WhatsApp" */
      readonly provider?: string;
    }
  | {
      /** A complete reason string, written as is. Prefer a code: it keeps the spec's format. */
      readonly reason: string;
    };

/** The `reason` string for a failure. */
export function reasonFor(failure: SendFailure): string {
  if ('reason' in failure) {
    requireText('SendFailure.reason', failure.reason);
    return failure.reason;
  }
  requireInteger('SendFailure.code', failure.code);
  return failureReason(failure.code, failure.description, failure.provider);
}

/**
 * Parses a spec 7.1 reason back into its parts (for receivers and statistics); `undefined` when it
 * does not have the shape "label, code, description".
 */
export function parseFailureReason(reason: string): { provider: string; code: number; description: string } | undefined {
  const m = /^([^,]+), (-?\d+), (.+)$/s.exec(reason);
  if (!m || m[1] === undefined || m[2] === undefined || m[3] === undefined) return undefined;
  return { provider: m[1], code: Number(m[2]), description: m[3] };
}
