/** Placeholder until the server subsystem lands; exports nothing yet. */
export {};
