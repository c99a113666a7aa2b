/**
 * A redis-server of one test's own, on a free loopback port, that the test stops and starts at will
 * (Redis down at start, restarted with or without its data). No vitest here.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { tempDir } from '../temp-dirs.js';

/** Bound of the waits here (real ms): only a hang reaches it. */
const WAIT_BOUND_MS = 60_000;

/** A free loopback port (the OS picks it; nothing else is listening there). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** Starts the server and waits until it answers PING. */
  start(): Promise<void>;
  /** Stops it: 'save' writes its data first (AOF fsynced), 'nosave' loses what is not on disk. */
  shutdown(mode: 'save' | 'nosave'): void;
}

/**
 * A server on its own port and directory. `persistence` 'aof' keeps an append-only file fsynced at
 * every write (the data survives a restart); 'none' keeps nothing (a restart comes back empty).
 */
export async function privateRedis(persistence: 'aof' | 'none'): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = tempDir('sendpool-redis-');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push(...(persistence === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
  const ping = (): boolean => {
    try {
      return execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe', encoding: 'utf8' }).trim() === 'PONG';
    } catch {
      return false;
    }
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const server = spawn('redis-server', args, { stdio: 'ignore', detached: false });
      server.unref();
      const begin = Date.now();
      while (!ping()) {
        if (Date.now() - begin > WAIT_BOUND_MS) throw new Error(`redis-server on port ${port} did not answer within ${WAIT_BOUND_MS} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    shutdown(mode) {
      try {
        execFileSync('redis-cli', ['-p', String(port), 'shutdown', mode], { stdio: 'pipe' });
      } catch {
        // already down (redis-cli reports the closed connection of a successful shutdown too)
      }
    },
  };
}
