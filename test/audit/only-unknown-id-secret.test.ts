/**
 * `only` is the integrator's text: an unknown check id is quoted back in the TypeError, but never
 * the client secret in it (a secret pasted into a list of ids, whole or a piece of it), and never
 * more than a line's worth of it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration } from 'hosted-sms-verify-kit/testing';
import { startIntegratorApp, type IntegratorApp } from './integrator-app.ts';

const apps: IntegratorApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function started(): Promise<IntegratorApp> {
  const app = await startIntegratorApp();
  apps.push(app);
  return app;
}

/** The message auditIntegration refuses `only` with, the rest of the options the app's own. */
async function refusalOf(app: IntegratorApp, only: string[]): Promise<string> {
  try {
    await auditIntegration({ ...app.auditOptions, only });
  } catch (error) {
    return String((error as Error).message);
  }
  throw new Error('auditIntegration ran with an unknown check id');
}

describe('an unknown id in only', () => {
  it('is quoted without the client secret, whole or a piece of it', async () => {
    const app = await started();
    const { clientSecret } = app.auditOptions as { clientSecret: string };
    const piece = clientSecret.slice(3, 15);
    const message = await refusalOf(app, ['leak.secret', clientSecret, `x-${piece}`]);
    expect(message).toContain('unknown check id(s)');
    expect(message).not.toContain(clientSecret);
    expect(message).not.toContain(piece.slice(0, 8));
  });

  it('is quoted cut short when it is longer than a line, and a plain typo as typed', async () => {
    const message = await refusalOf(await started(), ['leak.secrte', 'y'.repeat(5000)]);
    expect(message).toContain('leak.secrte');
    expect(message).not.toContain('y'.repeat(61));
    expect(message.length).toBeLessThan(3000);
  });
});
