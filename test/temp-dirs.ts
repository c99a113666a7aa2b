/**
 * Scratch directories of the tests: made under the system's temporary directory and removed after
 * the test file that made them (test/setup/temp-dirs.ts), so runs do not leave them behind: the
 * helpers that make them have no test hook of their own to clean up in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new directory `<tmp>/<prefix>XXXXXX`, removed with everything in it after its test file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes the directories made so far (the setup file calls it after each test file). */
export function removeTempDirs(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}
