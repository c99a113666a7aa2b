/**
 * No file of src/ imports, directly or through others, a file that imports it: type imports count
 * too (`import type`, `import('…').T`), since a cycle of types is still two files that cannot be
 * read, moved or tested one without the other. The graph is read from the sources' relative
 * import and export specifiers; its strongly connected components must all be single files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
/** `import … from './x.js'`, `export … from './x.js'`, `import './x.js'`, `import('./x.js')`. */
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sources(dir: string, into: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, into);
    else if (path.endsWith('.ts')) into.push(path);
  }
  return into;
}

function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec === undefined) continue;
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one file (or a file importing itself). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import graph of src/', () => {
  it('has no cycles, type imports included', () => {
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(100);
    const graph = importGraph(files);
    // The specifiers are read: about five imports of sendpool's own a file.
    expect([...graph.values()].flat().length).toBeGreaterThan(3 * files.length);
    const named = cycles(graph).map((c) => c.map((f) => relative(SRC, f)).sort());
    expect(named).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
      ['e', ['e']],
    ]);
    expect(cycles(graph).map((c) => c.sort())).toEqual([['a', 'b', 'c'], ['e']]);
  });
});
