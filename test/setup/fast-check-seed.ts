/**
 * Pins fast-check's seed in CI so a red run can be replayed exactly; outside CI a fresh seed per
 * run explores more. fast-check prints the seed and the counterexample path on failure; set
 * FC_SEED to replay it locally.
 */
import fc from 'fast-check';

const fromEnv = process.env['FC_SEED'];
const seed = fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : process.env['CI'] ? 20261123 : (Date.now() ^ (Math.random() * 0x100000000)) | 0;

fc.configureGlobal({ seed, numRuns: 100 });
