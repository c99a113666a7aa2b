import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHANNEL_ERRORS } from '../../src/core/channel-errors.js';
import { reasonFor } from '../../src/events/failure-reason.js';
import { CAMPAIGN_COUNT_KEYS } from '../../src/events/schemas/campaign.js';

const doc = readFileSync(fileURLToPath(new URL('../../docs/events.md', import.meta.url)), 'utf8');

describe('docs/events.md', () => {
  it('lists every known channel error code with its exact reason string', () => {
    for (const e of CHANNEL_ERRORS) {
      expect(doc, `code ${e.code}`).toContain(`| ${e.code} | \`${reasonFor({ code: e.code })}\` |`);
    }
  });

  it('defines every count of the campaign statistics', () => {
    for (const k of CAMPAIGN_COUNT_KEYS) expect(doc, k).toContain(`\`${k}\``);
  });
});
