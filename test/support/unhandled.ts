/**
 * Rejections nobody handled, as the process sees them (an unhandled rejection ends a Node process
 * with code 1 and a stack): a suite's tests assert there were none.
 */
import { afterEach, beforeEach } from 'vitest';

/** Listens from each test's start to its end; `settled()` lets late rejections arrive, then lists them. */
export function watchUnhandledRejections(): { settled(): Promise<unknown[]> } {
  const seen: unknown[] = [];
  const collect = (reason: unknown) => void seen.push(reason);
  beforeEach(() => {
    seen.length = 0;
    process.on('unhandledRejection', collect);
  });
  afterEach(() => {
    process.off('unhandledRejection', collect);
  });
  return {
    async settled() {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return seen.splice(0);
    },
  };
}
