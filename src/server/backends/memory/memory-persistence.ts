/**
 * The persistence of a server that keeps its state in memory: nothing to wait for. What would be
 * kept with a step is there at once (events staged are delivered now), so the features ask the
 * same questions whatever the backend.
 */
import type { OutboxEvent } from '../../../events/outbox.js';
import type { EnqueuedRun, Persistence, WrittenEvent } from '../../ports/persistence.js';

export class MemoryPersistence implements Persistence {
  readonly failed = false;
  readonly writes = 0;

  /** @param deliver puts events in the outbox (the notifier's `written`) */
  constructor(private readonly deliver: (records: readonly WrittenEvent[]) => void) {}

  commit(): Promise<void> {
    return Promise.resolve();
  }

  schedule(): void {}

  stage(event: OutboxEvent): void {
    this.deliver([event]);
  }

  stageRun(run: EnqueuedRun): void {
    this.deliver([{ run }]);
  }

  runChanged(): void {}

  stageSms(): void {}

  smsAnswered(): void {}

  delivered(): void {}

  flush(): void {}
}
