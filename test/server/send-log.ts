/**
 * The independent record of the kill tests: child server processes append every attempt to a log
 * file (one JSON line) before their channel answers; the test reads it on from where it stopped.
 * Also the process helpers those tests (and bench/redis-server.bench.ts) share.
 */
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createServer } from 'node:net';

/** A reader of the log file's entries, each read going on from where the last stopped. */
export function logReader<T>(file: string): () => T[] {
  const entries: T[] = [];
  let offset = 0;
  let partial = '';
  const buffer = Buffer.alloc(1 << 20);
  return () => {
    if (!existsSync(file)) return entries;
    const fd = openSync(file, 'r');
    try {
      for (let n = readSync(fd, buffer, 0, buffer.length, offset); n > 0; n = readSync(fd, buffer, 0, buffer.length, offset)) {
        offset += n;
        const lines = (partial + buffer.toString('utf8', 0, n)).split('\n');
        partial = lines.pop()!;
        for (const l of lines) if (l.endsWith('}')) entries.push(JSON.parse(l) as T);
      }
    } finally {
      closeSync(fd);
    }
    return entries;
  };
}

/** SIGKILLs a child process and waits until it is gone. */
export function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** A request with the test's key. */
export function keyed(key: string) {
  return (url: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key-id': key },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/** A loopback TCP port free now (for a server of the test's own, e.g. a redis-server). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
