/**
 * A store whose every method call goes through a function of the caller's: the kit bounds the
 * store's calls with it (the integrator's store is outside the kit's trust for liveness). A proxy,
 * so a method a later store adds goes through too; its own target, since a proxy of a frozen store
 * could not hand out other methods in place of the store's own.
 */

/** How a call is made: `name` is the method's (`stepUp.insertGrant` for a nested store's). */
export type CallThrough = (name: string, call: () => unknown) => unknown;

export interface CallsThroughOptions {
  /** Put before each method's name. */
  prefix?: string;
  /**
   * The nested step-up and SMS pumping stores: through the same function ('through', the default),
   * or handed out as they are ('as-is', where the caller bounds them itself).
   */
  nested?: 'through' | 'as-is';
}

export function callsThrough<T extends object>(target: T, through: CallThrough, options: CallsThroughOptions = {}): T {
  const { prefix = '', nested = 'through' } = options;
  // One function per method, made once: requests call them all the time.
  const made = new Map<string | symbol, { of: unknown; call: unknown }>();
  return new Proxy(Object.create(target) as T, {
    get(_, key) {
      const value: unknown = Reflect.get(target, key, target);
      const isNested = key === 'stepUp' || key === 'pumping';
      if (isNested && nested === 'as-is') return value;
      if (typeof value !== 'function' && !(isNested && typeof value === 'object' && value !== null)) return value;
      const kept = made.get(key);
      if (kept !== undefined && kept.of === value) return kept.call;
      const name = `${prefix}${String(key)}`;
      const call =
        typeof value === 'function'
          ? (...args: unknown[]) => through(name, () => (value as (...a: unknown[]) => unknown).apply(target, args))
          : callsThrough(value as object, through, { prefix: `${name}.` });
      made.set(key, { of: value, call });
      return call;
    },
  });
}
