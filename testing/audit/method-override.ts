/** How apps let a request name another method than its own: the override headers. */

/** The override headers method-override and the frameworks it follows read, each naming `method`. */
export function overrideHeaders(method: string): Record<string, string> {
  const names = ['x-http-method-override', 'x-http-method', 'x-method-override'];
  return Object.fromEntries(names.map((name) => [name, method]));
}
