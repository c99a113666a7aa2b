/**
 * `openSqliteStorage`: the server's durable store (src/storage/sqlite-storage.ts) with the tables of
 * every durable component of the sqlite backend (components/).
 */
import type { ServerStorage, SqliteStorageOptions } from '../../../storage/sqlite-storage.js';
import { openSqliteStore } from '../../../storage/sqlite-storage.js';
import { storeParts } from './components/index.js';

/**
 * Opens (creating if needed) the server's database in `dir` (`<dir>/sendpool.db`, with its WAL
 * files and its seal `sendpool.db.seal`), checked first: a damaged or incomplete store is refused
 * unless `recover`. Give it to `buildServer` as `storage`, with what `load()` found as `stored`.
 * @throws StoreDamagedError when the store is damaged or holds less than its seal says (and not `recover`)
 * @throws when the directory cannot be created or the file is not a sendpool database of a known schema
 */
export function openSqliteStorage(dir: string, options: SqliteStorageOptions = {}): Promise<ServerStorage> {
  return openSqliteStore(dir, storeParts(), options);
}
