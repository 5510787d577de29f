/**
 * A method of a store replaced for one part of a test (a call that hangs, rejects or throws), then
 * put back as it was: its own property restored, or removed so that the prototype's answers again.
 */
export async function withMethodReplaced<T extends object, K extends keyof T, R>(
  target: T,
  name: K,
  replacement: T[K],
  body: () => Promise<R>,
): Promise<R> {
  const own = Object.getOwnPropertyDescriptor(target, name);
  target[name] = replacement;
  try {
    return await body();
  } finally {
    if (own === undefined) Reflect.deleteProperty(target, name);
    else Object.defineProperty(target, name, own);
  }
}
