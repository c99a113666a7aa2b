/** The exact text of docs/openapi.json, shared by the script and the up-to-date test. */
import { buildOpenApiDocument } from '../src/contract/openapi.js';

export function renderOpenApi(version: string): string {
  return `${JSON.stringify(buildOpenApiDocument({ version }), null, 2)}\n`;
}
