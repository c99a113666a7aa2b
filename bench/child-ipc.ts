/** Talking to a bench's child server process over IPC: wait for one message, stop it. */
import type { ChildProcess } from 'node:child_process';

/** The child's next message of kind `op`; rejects if it exits first. */
export function next<T>(child: ChildProcess, op: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { op: string }) => {
      if (m.op !== op) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before "${op}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Asks the child to exit (SIGKILL when its channel is gone) and waits until it has. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.send({ op: 'exit' });
  else child.kill('SIGKILL');
  await exited;
}
