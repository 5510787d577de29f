/**
 * Lets the event loop run between the slices of a long search. The app and the emulator an audit
 * runs against may share its process (an integrator's test suite does): a search holding the loop
 * for seconds would hold their answers past the audit's own timeouts, and fail checks for nothing.
 */

/** How long a search runs before it lets the loop run. */
const SLICE_MS = 20;

/** A function to await between the steps of a search: it yields once a slice's time is spent. */
export function breather(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
