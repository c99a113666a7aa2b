/**
 * A durable feature as the sqlite backend declares it: its name (its field in a step and in what a
 * restart finds: src/storage/server-storage.ts), its tables (src/storage/sqlite-tables.ts), and its
 * component, made over what the server holds (ports/durable.ts). One file each in this folder,
 * listed once in index.ts; the store opens every part listed, the durable step asks every
 * component, and the backend restores every one, each by its name.
 */
import type { StorageStep, StoredState } from '../../../../storage/server-storage.js';
import type { PartTables, StorePart } from '../../../../storage/sqlite-tables.js';
import type { DurableComponent } from '../../../ports/durable.js';
import type { DurableSources } from './sources.js';

/** The names of the durable components: every field of a step but the engine's. */
export type DurableName = Exclude<keyof StorageStep, 'engine'>;
/** What a component writes in a step. */
export type ChangesOf<N extends DurableName> = NonNullable<StorageStep[N]>;
/** What a component finds at a restart. */
export type RowsOf<N extends DurableName> = StoredState[N];

export interface Durable<N extends DurableName> {
  readonly name: N;
  /** Its tables: created at every open, its changes written in the step's transaction, its rows loaded. */
  readonly tables: PartTables<ChangesOf<N>, RowsOf<N>>;
  /** The component over the server's parts, books and staged writes. */
  component(sources: DurableSources): Omit<DurableComponent<ChangesOf<N>, RowsOf<N>>, 'name'>;
}

/** A component as the durable step and the restore see it: by its name, its changes and rows of that name. */
export interface NamedComponent extends DurableComponent<unknown, unknown> {
  readonly name: DurableName;
}

/** The part the store opens for a durable feature: its field of a step written, its field of what a restart finds loaded. */
export function storePart<N extends DurableName>(d: Durable<N>): StorePart {
  const { tables } = d;
  return {
    schema: tables.schema,
    ...(tables.upgrade ? { upgrade: (db) => tables.upgrade?.(db) } : {}),
    open(db, meta) {
      const opened = tables.open(db, meta);
      return {
        write(step, notes) {
          const changes = step[d.name];
          if (changes !== undefined) opened.write(changes, notes);
        },
        load(metaRows) {
          const { rows, found } = opened.load(metaRows);
          const part: { [K in DurableName]?: unknown } = { [d.name]: rows };
          return { rows: part as Partial<StoredState>, found };
        },
      };
    },
  };
}

/** A durable feature's component, named. */
export function namedComponent<N extends DurableName>(d: Durable<N>, sources: DurableSources): NamedComponent {
  const c = d.component(sources);
  const named: DurableComponent<ChangesOf<N>, RowsOf<N>> & { readonly name: N } = {
    name: d.name,
    takeChanges: (full, now) => c.takeChanges(full, now),
    restore: (rows, now) => c.restore(rows, now),
  };
  return named;
}

/** The components' changes since the last step (everything with `full`), each under its name; a component without any is absent. */
export function collectChanges(components: readonly NamedComponent[], full: boolean, now: number): Omit<StorageStep, 'engine'> {
  const step: { [K in DurableName]?: unknown } = {};
  for (const c of components) {
    const changes = c.takeChanges(full, now);
    if (changes !== undefined) step[c.name] = changes;
  }
  return step as Omit<StorageStep, 'engine'>;
}

/** Each component loads its rows of what the store kept, by its name, at `now`. */
export function restoreComponents(components: readonly NamedComponent[], stored: StoredState, now: number): void {
  for (const c of components) c.restore(stored[c.name], now);
}
