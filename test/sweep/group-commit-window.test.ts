/**
 * The group committer's gathering window (middleware/fulfil/group-commit.ts): fulfilments that arrive
 * within `gatherMs` share one fulfilBatch (one commit), a full group commits without waiting for
 * the rest of its window, and every request still gets its own result.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { groupCommitter } from '../../middleware/fulfil/group-commit.ts';
import type { Attempt, FulfilOnceResult, FulfilRequest, FulfilSettlement } from '../../middleware/store/types.ts';

/** A store whose fulfilBatch records each group's sessionIds and fulfils every request. */
function recordingStore() {
  const groups: string[][] = [];
  return {
    groups,
    async fulfilBatch(requests: readonly FulfilRequest<unknown>[]): Promise<FulfilSettlement[]> {
      groups.push(requests.map((r) => r.attempt.sessionId));
      // Only the sessionId matters here: it tells each caller's result apart.
      return requests.map((r) => ({
        ok: true,
        result: { kind: 'not_pending', attempt: r.attempt },
      }));
    },
  };
}

const request = (n: number): FulfilRequest<unknown> => ({
  attempt: { sessionId: `session-${n}` } as Attempt,
  effect: () => undefined,
  now: n,
  options: { ordering: 'independent' },
});

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it('commits fulfilments that arrive within the window in one group, and each caller gets its own result', async () => {
  const store = recordingStore();
  const committer = groupCommitter(store, { maxGroup: 50, parallel: 1, gatherMs: 5 });
  const results: Promise<FulfilOnceResult>[] = [committer.fulfil(request(1))];
  await vi.advanceTimersByTimeAsync(2);
  results.push(committer.fulfil(request(2)));
  await vi.advanceTimersByTimeAsync(2);
  results.push(committer.fulfil(request(3)));
  expect(store.groups).toEqual([]);
  await vi.advanceTimersByTimeAsync(2);
  expect(store.groups).toEqual([['session-1', 'session-2', 'session-3']]);
  expect((await Promise.all(results)).map((r) => (r.kind === 'not_pending' ? r.attempt?.sessionId : r.kind))).toEqual([
    'session-1',
    'session-2',
    'session-3',
  ]);
});

it('commits a full group at once instead of waiting for the rest of its window', async () => {
  const store = recordingStore();
  const committer = groupCommitter(store, { maxGroup: 3, parallel: 1, gatherMs: 1000 });
  const results = [1, 2, 3, 4].map((n) => committer.fulfil(request(n)));
  await vi.advanceTimersByTimeAsync(1);
  expect(store.groups).toEqual([['session-1', 'session-2', 'session-3']]);
  await vi.advanceTimersByTimeAsync(1000);
  expect(store.groups).toEqual([['session-1', 'session-2', 'session-3'], ['session-4']]);
  await Promise.all(results);
});

it('asks a window given as a function once per group, when the group starts gathering', async () => {
  const store = recordingStore();
  const windows = [100, 10];
  let asked = 0;
  const committer = groupCommitter(store, { maxGroup: 50, parallel: 1, gatherMs: () => windows[asked++]! });
  const results = [committer.fulfil(request(1))];
  await vi.advanceTimersByTimeAsync(50);
  results.push(committer.fulfil(request(2)));
  await vi.advanceTimersByTimeAsync(49);
  expect(store.groups).toEqual([]);
  await vi.advanceTimersByTimeAsync(1);
  expect(store.groups).toEqual([['session-1', 'session-2']]);
  results.push(committer.fulfil(request(3)));
  await vi.advanceTimersByTimeAsync(10);
  expect(store.groups).toEqual([['session-1', 'session-2'], ['session-3']]);
  expect(asked).toBe(2);
  await Promise.all(results);
});

it('without a window, commits on the next turn of the event loop', async () => {
  const store = recordingStore();
  const committer = groupCommitter(store, { maxGroup: 50, parallel: 1 });
  const first = committer.fulfil(request(1));
  await vi.advanceTimersByTimeAsync(0);
  expect(store.groups).toEqual([['session-1']]);
  await first;
});

it('flush commits the gathering group at once, and every later one without a window', async () => {
  const store = recordingStore();
  const committer = groupCommitter(store, { maxGroup: 50, parallel: 1, gatherMs: 1000 });
  const first = [1, 2].map((n) => committer.fulfil(request(n)));
  await vi.advanceTimersByTimeAsync(10);
  expect(store.groups).toEqual([]);
  committer.flush();
  await vi.advanceTimersByTimeAsync(0);
  expect(store.groups).toEqual([['session-1', 'session-2']]);
  const later = committer.fulfil(request(3));
  await vi.advanceTimersByTimeAsync(0);
  expect(store.groups).toEqual([['session-1', 'session-2'], ['session-3']]);
  await Promise.all([...first, later]);
});
