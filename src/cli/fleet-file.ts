/**
 * Reading the FLEET argument: the file, its JSON, the fleet validation (every problem with its JSON
 * path), then the business and template type a command names.
 */
import { validateFleet, type Fleet } from '../index.js';
import { UsageError, fileProblems } from './errors.js';
import type { Io } from './io.js';

/** Why a file could not be read, in words. */
export function readFailure(e: unknown): string {
  const code = (e as { code?: string }).code;
  return code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : String((e as Error).message ?? e);
}

/** A file's JSON, or a UsageError naming the file and the place of the syntax error. */
export function readJsonFile(io: Io, file: string): unknown {
  let text: string;
  try {
    text = io.readFile(file);
  } catch (e) {
    throw new UsageError(`${file}: cannot read: ${readFailure(e)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(`${file}: $: expected JSON, got a syntax error ${where(text, e)}: ${(e as Error).message}`);
  }
}

/** `at line 3 column 7` from a JSON.parse error that mentions a position. */
function where(text: string, e: unknown): string {
  const m = /position (\d+)/.exec((e as Error).message ?? '');
  if (!m) return 'at the end of the file';
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `at line ${line} column ${column}`;
}

/** The fleet description of `file`, validated whole. */
export function loadFleet(io: Io, file: string): { raw: unknown; fleet: Fleet } {
  const raw = readJsonFile(io, file);
  const validation = validateFleet(raw);
  if (!validation.ok) {
    throw new UsageError(
      fileProblems(
        file,
        validation.problems.map((p) => `${file}: ${p.message}`),
      ),
    );
  }
  return { raw, fleet: validation.fleet };
}

/** Checks that the fleet has the business and its template type; both are usage errors otherwise. */
export function findPool(file: string, fleet: Fleet, businessId: number, typeId: number): { businessName: string; typeName: string } {
  const bi = fleet.businesses.findIndex((b) => b.id === businessId);
  if (bi < 0) {
    const known = fleet.businesses.map((b) => b.id).join(', ') || 'none';
    throw new UsageError(`--business ${businessId}: ${file}: $.businesses[*].id: expected the id of a business of the fleet (${known}), got ${businessId}`);
  }
  const business = fleet.businesses[bi]!;
  const type = business.templateTypes.find((t) => t.id === typeId);
  if (!type) {
    const known = business.templateTypes.map((t) => t.id).join(', ') || 'none';
    throw new UsageError(`--type ${typeId}: ${file}: $.businesses[${bi}].templateTypes[*].id: expected a template type of business ${businessId} (${known}), got ${typeId}`);
  }
  return { businessName: business.name, typeName: type.name };
}
