/** How the sweep job hears that it should stop: SIGTERM, SIGINT, or the caller's AbortSignal. */
import { CLAIMS_LAPSE } from './worker.ts';

/**
 * Aborts on SIGTERM/SIGINT (when handled) or the caller's signal; `dispose` removes the listeners.
 * A second SIGTERM/SIGINT, while the first still waits on in-flight reads and closes, ends the
 * process at once by that signal, as an operator pressing Ctrl-C twice expects: the claims it held
 * lapse with their lease, and each fulfilment committed or not as a whole.
 */
export function stopSignal(
  options: { handleSignals: boolean; signal: AbortSignal | undefined },
  emit: (obj: Record<string, unknown>) => void,
): { signal: AbortSignal; dispose: () => void } {
  const stop = new AbortController();
  const onSignal = (name: string) => {
    if (!stop.signal.aborted) emit({ event: 'sweep_stopping', signal: name });
    stop.abort();
  };
  // The caller's own abort is no signal of the operator's: their first one still stops gracefully.
  let signalHeard = false;
  const onProcessSignal = (name: NodeJS.Signals) => {
    if (!signalHeard) {
      signalHeard = true;
      return onSignal(name);
    }
    emit({ event: 'sweep_stopped', signal: name, reason: `a second ${name}: ended at once; ${CLAIMS_LAPSE}` });
    dispose();
    // Raised again with the job's listeners gone: the process ends as the signal's default does,
    // unless the configuration listens to it too, whose own handler then decides.
    if (process.listenerCount(name) === 0) process.kill(process.pid, name);
  };
  const onTerm = () => onProcessSignal('SIGTERM');
  const onInt = () => onProcessSignal('SIGINT');
  const onExternal = () => onSignal('abort');
  const { handleSignals } = options;
  if (handleSignals) {
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  }
  options.signal?.addEventListener('abort', onExternal, { once: true });
  if (options.signal?.aborted) onExternal();
  const dispose = () => {
    if (handleSignals) {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
    }
    options.signal?.removeEventListener('abort', onExternal);
  };
  return { signal: stop.signal, dispose };
}
