/** Placeholder until the redis subsystem lands; exports nothing yet. */
export {};
