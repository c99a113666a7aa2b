/**
 * Bounds of the WhatsApp channel's pacing options, in a module of their own: `sendpool serve`
 * checks its flags with them without loading the channel.
 */

/** Default ceiling of a number's in-flight window (`maxInFlightPerNumber`). */
export const DEFAULT_MAX_IN_FLIGHT_PER_NUMBER = 2_000;

/** Highest `maxInFlightPerNumber` accepted. */
export const MAX_IN_FLIGHT_PER_NUMBER = 100_000;
