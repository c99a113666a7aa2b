/**
 * The dashboard's static files (one HTML page, one JS module, one CSS file) and the headers they
 * are served with. The files ship in the package (dist/dashboard/, copied by the build) and are
 * read once when the server is built; in the source tree they sit beside this module (assets/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { optionConflict, ServerOptionsError } from '../ports/errors.js';

/**
 * Only the page's own script and style, no inline code, no frames, no forms posting elsewhere; the
 * page talks to its own origin only. Styles set from the script go through the CSSOM, which this
 * policy allows, and the charts are SVG elements made with the DOM.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every dashboard answer, files and data alike. */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

export interface DashboardAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** The files, by name under /dashboard/. */
export const ASSET_FILES = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
} as const;

export type AssetName = keyof typeof ASSET_FILES;

/** Where the files are: beside the build's chunks (dist/dashboard/), or beside this module in the sources. */
function assetDirectory(): string {
  const candidates = [new URL('./dashboard/', import.meta.url), new URL('./assets/', import.meta.url)].map((u) => fileURLToPath(u));
  const found = candidates.find((dir) => existsSync(`${dir}index.html`));
  if (found === undefined) {
    throw new ServerOptionsError([optionConflict('dashboard', `the dashboard's files installed (looked in ${candidates.join(' and ')}): reinstall sendpool, or dashboard: false`, 'files missing')]);
  }
  return found;
}

/** Reads the three files once. */
export function loadAssets(): ReadonlyMap<AssetName, DashboardAsset> {
  const dir = assetDirectory();
  const out = new Map<AssetName, DashboardAsset>();
  for (const [name, contentType] of Object.entries(ASSET_FILES) as [AssetName, string][]) out.set(name, { body: readFileSync(`${dir}${name}`), contentType });
  return out;
}
