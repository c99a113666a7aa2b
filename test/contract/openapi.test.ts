import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SendRequestSchema, buildOpenApiDocument } from '../../src/contract/index.js';
import { renderOpenApi } from '../../scripts/openapi-render.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const version = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version;

describe('docs/openapi.json', () => {
  it('is up to date with the schemas (regenerate: npm run openapi)', () => {
    expect(readFileSync(`${root}docs/openapi.json`, 'utf8')).toBe(renderOpenApi(version));
  });

  it('describes the four endpoints of part 4, the API key header and the error answers', () => {
    const doc = buildOpenApiDocument({ version }) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { securitySchemes: unknown; schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(['/messenger/businesses/', '/messenger/messages/', '/sms/messages/', '/messenger/config/']);
    expect(Object.keys(doc.paths['/messenger/messages/']!['post']!.responses).sort()).toEqual(['202', '400', '401', '408', '409', '413', '415', '422', '429', '500']);
    expect(doc.components.securitySchemes).toEqual({ apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key-id' }) });
    expect(doc.components.schemas['SendRequest']).toEqual(JSON.parse(JSON.stringify(SendRequestSchema)));
  });
});
