/**
 * TypeBox checks a `format` only when it is registered, and fails values of unknown formats. The
 * schemas use the two standard formats `uuid` and `date-time`; this registers them once, unless the
 * host has registered its own (a host's stricter checker wins).
 */
import { FormatRegistry } from '@sinclair/typebox';
import { DATE_TIME_PATTERN } from '../datetime.js';
import { UUID_PATTERN as UUID } from '../uuid.js';

/** Registers the `uuid` and `date-time` formats in TypeBox's registry when absent. Idempotent. */
export function registerEventFormats(): void {
  if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID.test(v));
  if (!FormatRegistry.Has('date-time')) {
    FormatRegistry.Set('date-time', (v) => DATE_TIME_PATTERN.test(v) && !Number.isNaN(Date.parse(v)));
  }
}
