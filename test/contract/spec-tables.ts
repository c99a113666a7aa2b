/**
 * Extracts the field tables of spec parts 2 and 4 from spec/service.md into the checked-in fixture
 * test/contract/spec-tables.json (run `npx tsx scripts/spec-tables.ts`). The golden test compares
 * the contract schemas with the fixture, and the fixture with the spec when the spec is present.
 */

export interface SpecField {
  readonly name: string;
  readonly type: string;
}

export interface SpecTable {
  readonly title: string;
  readonly fields: readonly SpecField[];
}

export interface SpecTables {
  readonly source: string;
  readonly tables: Readonly<Record<string, SpecTable>>;
}

const PARTS = ['2', '4'];

/** Every table whose first column is `Field`, under a `### N.M` heading of parts 2 and 4. */
export function extractSpecTables(markdown: string): SpecTables {
  const tables: Record<string, { title: string; fields: SpecField[] }> = {};
  let section: { id: string; title: string } | undefined;
  let current: { title: string; fields: SpecField[] } | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^###\s+(\d+)\.(\d+)\s+(.*)$/.exec(line);
    if (heading) {
      section = { id: `${heading[1]}.${heading[2]}`, title: heading[3]!.trim() };
      current = undefined;
      continue;
    }
    if (/^##\s/.test(line)) {
      section = undefined;
      current = undefined;
      continue;
    }
    if (section === undefined || !PARTS.includes(section.id.split('.')[0]!)) continue;
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells[0] === 'Field') {
      current = { title: section.title, fields: [] };
      tables[section.id] = current;
      continue;
    }
    if (current === undefined || /^-+$/.test(cells[0] ?? '')) continue;
    current.fields.push({ name: cells[0]!.replace(/`/g, ''), type: cells[1] ?? '' });
  }
  return { source: 'spec/service.md', tables };
}
