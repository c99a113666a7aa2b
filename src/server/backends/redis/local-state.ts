/**
 * What an instance of the server on Redis keeps outside Redis (`stateFile`), so that a Redis that
 * comes back empty is noticed, and what it held is restored, even when every instance restarted
 * with it: the queue's epoch id it saw last, and the webhook configurations and signing secrets of
 * the fleet as it last knew them. One small JSON file, written whole (a temporary file renamed over
 * it), readable by its owner only: it holds signing secrets. The chunks this instance accepted and
 * has not seen done are journaled beside it (`<name>.accepted.jsonl`, accepted-journal.ts).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { WebhookConfig } from '../../../contract/config-schema.js';
import { StateFileError } from '../../../runtime/state-file-error.js';

/** The content of an instance's state file. */
export interface RedisLocalState {
  /** The queue's epoch id (reset.ts) this instance saw last. */
  readonly queueEpoch?: string;
  /** Webhook configurations and secrets by company, as this instance last knew them. */
  readonly webhooks?: readonly { readonly companyId: number; readonly config: WebhookConfig; readonly secret: string }[];
}

export class LocalStateFile {
  readonly #path: string;
  #state: RedisLocalState;
  #written: string;

  /** Reads `path` (an absent file is an empty state; an unreadable one is an error naming it). */
  constructor(path: string) {
    this.#path = path;
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    this.#written = text ?? '';
    if (text === undefined) this.#state = {};
    else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new StateFileError('redis.stateFile', path, { expected: 'a JSON object written by sendpool', actual: `text that is not JSON (${e instanceof Error ? e.message : String(e)})` }, e);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new StateFileError('redis.stateFile', path, { expected: 'a JSON object written by sendpool', actual: Array.isArray(parsed) ? 'an array' : typeof parsed });
      const s = parsed as Record<string, unknown>;
      if (s['queueEpoch'] !== undefined && typeof s['queueEpoch'] !== 'string')
        throw new StateFileError('redis.stateFile', path, { field: '$.queueEpoch', expected: 'a string', actual: typeof s['queueEpoch'] });
      if (s['webhooks'] !== undefined && !Array.isArray(s['webhooks'])) throw new StateFileError('redis.stateFile', path, { field: '$.webhooks', expected: 'an array', actual: typeof s['webhooks'] });
      this.#state = s;
    }
  }

  /** The file's path (the accepted journal is kept beside it: accepted-journal.ts). */
  get path(): string {
    return this.#path;
  }

  get state(): RedisLocalState {
    return this.#state;
  }

  /** Changes some fields; written at once when the content changed. */
  update(patch: RedisLocalState): void {
    const next = { ...this.#state, ...patch };
    const text = `${JSON.stringify(next)}\n`;
    this.#state = next;
    if (text === this.#written) return;
    mkdirSync(dirname(this.#path), { recursive: true });
    const tmp = `${this.#path}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, this.#path);
    this.#written = text;
  }
}
