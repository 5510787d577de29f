/**
 * The options whose type the audit would otherwise find out mid-run, as a check failing for a reason
 * of the call's (`proxy.headers` as a string sent letter by letter, `logs` as an array read as no
 * log, an action's `fields` as a query string) or as a crash (`only` as one id): each is refused
 * when the audit is called, saying how to write it.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A path on the app: a string starting with one "/". */
function isPath(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith('/') && !value.startsWith('//');
}

function checkProxy(problems: string[], proxy: unknown): void {
  if (proxy === undefined) return;
  const headers = isRecord(proxy) ? proxy.headers : undefined;
  if (!isRecord(headers) || !Object.values(headers).every((value) => typeof value === 'string')) {
    problems.push(
      "`proxy` must be { headers: { name: 'value' } }, the headers your proxy adds as strings, e.g. { headers: { 'x-forwarded-proto': 'https' } }.",
    );
  }
}

function checkSignInForm(problems: string[], signIn: unknown): void {
  if (!isRecord(signIn)) return;
  for (const name of ['action', 'csrfFrom'] as const) {
    const path = signIn[name];
    if (path !== undefined && (typeof path !== 'string' || path === '')) {
      problems.push(`\`signIn.${name}\` must be a path on your app, e.g. '${name === 'action' ? '/login' : '/'}'.`);
    }
  }
  const token = signIn.tokenField;
  if (token !== undefined && (typeof token !== 'string' || token === '')) {
    problems.push("`signIn.tokenField` must be the name of your sign-in form's own hidden token field, e.g. '_csrf'.");
  }
}

function checkActionShapes(problems: string[], actions: unknown): void {
  if (!Array.isArray(actions)) return;
  actions.forEach((action: unknown, i) => {
    if (!isRecord(action)) return;
    if (action.path !== undefined && !isPath(action.path)) {
      problems.push(`\`actions[${i}].path\` must be the kit's start path on your app, e.g. '/verify/start'.`);
    }
    const { fields } = action;
    if (fields !== undefined && typeof fields !== 'function' && !isRecord(fields)) {
      problems.push(
        `\`actions[${i}].fields\` must be the form's other fields, e.g. { amount: '10' }, or a function (n) returning them.`,
      );
    }
  });
}

/** One problem per option given with a type the audit cannot use. */
export function illTypedOptions(options: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { only, logs, sessionCookie } = options;
  if (only !== undefined && (!Array.isArray(only) || !only.every((id) => typeof id === 'string'))) {
    problems.push("`only` must be a list of check ids (AUDIT_CHECK_IDS), e.g. ['leak.secret'].");
  }
  if (logs !== undefined && typeof logs !== 'function') {
    problems.push("`logs` must be a function returning your app's log lines so far, e.g. () => logLines.");
  }
  if (sessionCookie !== undefined && (typeof sessionCookie !== 'string' || sessionCookie === '')) {
    problems.push("`sessionCookie` must be your session cookie's name, e.g. 'connect.sid'.");
  }
  checkProxy(problems, options.proxy);
  if (typeof options.signIn !== 'function') checkSignInForm(problems, options.signIn);
  checkActionShapes(problems, options.actions);
  return problems;
}
