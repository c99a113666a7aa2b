/** Raw TCP clients for the connection tests: write bytes, then wait for the server to close. */
import net from 'node:net';

/**
 * Bound of a wait for the server to close a connection. The tests configure timeouts of a fraction
 * of a second; this bound is a hundred times that and more, yet below Fastify's own keep-alive
 * default (72 s), so a server that ignored the configured limits would fail rather than pass late.
 */
export const CLOSE_BOUND_MS = 60_000;

/** What a connection saw, once the server closed it. */
export interface Closed {
  /** Everything the server sent. */
  readonly text: string;
  /** HTTP answers in `text`, by status line. */
  readonly statuses: readonly number[];
}

/** An open connection: write more, or wait for the server to close it. */
export interface Connection {
  readonly socket: net.Socket;
  /** Bytes received so far. */
  text(): string;
  /** Resolves when the server has closed the connection; rejects after {@link CLOSE_BOUND_MS}. */
  closed(): Promise<Closed>;
}

/** Opens a TCP connection to `url`'s host and port and writes `first` (if any) once connected. */
export async function connect(url: string, first?: string): Promise<Connection> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  // A reset (the server destroying the socket) is a close too; the 'close' event follows.
  socket.on('error', () => {});
  const closing = new Promise<Closed>((resolve, reject) => {
    const bound = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${CLOSE_BOUND_MS} ms; received: ${JSON.stringify(text.slice(0, 300))}`));
    }, CLOSE_BOUND_MS);
    socket.on('close', () => {
      clearTimeout(bound);
      resolve({ text, statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])) });
    });
  });
  closing.catch(() => {}); // observed by closed(); avoids an unhandled rejection when a test fails earlier
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  if (first !== undefined) socket.write(first);
  return { socket, text: () => text, closed: () => closing };
}

/** The JSON body of the last answer in `text`. */
export function lastBody(text: string): any {
  const body = text.slice(text.lastIndexOf('\r\n\r\n') + 4);
  return JSON.parse(body);
}
