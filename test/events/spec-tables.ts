/**
 * Extracts the payload field tables of spec part 6 (and the two payloads given as prose) from the
 * spec's markdown, for test/events/spec-tables.json. Regenerate the fixture with
 * `npx tsx test/events/update-spec-tables.ts` when the spec changes.
 */

/** One field of a spec table: name and the type as written. */
export interface SpecField {
  readonly field: string;
  readonly type: string;
}

export type SpecTables = Record<string, SpecField[]>;

/** Which fixture key a caption ("Payload:", "Message object:", …) of a part-6 section names. */
const CAPTIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '6.1': { '`report.ready` payload:': 'report.ready', '`report.error` payload:': 'report.error' },
  '6.2': {
    'Payload:': 'attendance',
    'Message object:': 'attendance.message',
    'Survey object:': 'attendance.survey',
    'Answer object:': 'attendance.survey.answer',
  },
  '6.3': { 'Payload:': 'hsm' },
  '6.4': { 'Payload:': 'campaign.batch', 'Campaign object:': 'campaign' },
};

/** "`question` (string), `question_type` (string: …)" -> fields. */
function proseFields(text: string): SpecField[] {
  const out: SpecField[] = [];
  for (const m of text.matchAll(/`([A-Za-z_]+)` \(((?:[^()]|\([^()]*\))*)\)/g)) {
    if (m[1] !== undefined && m[2] !== undefined) out.push({ field: m[1], type: m[2] });
  }
  return out;
}

/** Extracts the tables; keys as in {@link CAPTIONS}, plus `<key>.<field>` for objects whose keys are listed in the notes. */
export function extractSpecTables(markdown: string): SpecTables {
  const tables: SpecTables = {};
  let section = '';
  let target: string | undefined;
  for (const line of markdown.split(/\r?\n/)) {
    const heading = /^###\s+(6\.\d)\b/.exec(line);
    if (heading) {
      section = heading[1] ?? '';
      target = undefined;
      continue;
    }
    if (/^##\s/.test(line) && !line.startsWith('###')) {
      section = '';
      target = undefined;
      continue;
    }
    const captions = CAPTIONS[section];
    if (!captions) continue;
    const caption = Object.keys(captions).find((c) => line.startsWith(c));
    if (caption !== undefined) {
      target = captions[caption];
      const rest = line.slice(caption.length).trim();
      if (rest && target) {
        tables[target] = proseFields(rest);
        target = undefined;
      }
      continue;
    }
    if (target && line.startsWith('|')) {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      const [field, type, notes = ''] = cells;
      if (!field || !type || field === 'Field' || /^-+$/.test(field)) continue;
      (tables[target] ??= []).push({ field, type });
      // "object or null | `id`, `name`" (or "attendant: `id`, `name`"): the nested object's keys, no types given.
      if (/^object/.test(type) && /^(?:[a-z ]+: )?`[a-z_]+`(, `[a-z_]+`)*$/.test(notes)) {
        tables[`${target}.${field}`] = [...notes.matchAll(/`([a-z_]+)`/g)].map((m) => ({ field: m[1] as string, type: '' }));
      }
    }
  }
  return tables;
}
