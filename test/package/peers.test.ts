/**
 * express-session is what the start form's token and the step-up guard keep their state in: the
 * package names it as an optional peer (a kit for the mobile flow or the sweep job alone needs
 * none), within the range the repository tests, the README's Install says so, and a kit used
 * without it says which package to mount instead of failing obscurely.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVerificationKit, isKitError, KitErrorCode } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { ROOT } from './scratch.ts';

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const installed = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules', 'express-session', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** The README's Install section (up to the next `## ` heading). */
function installSection(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Install');
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

describe('express-session, as the package names it', () => {
  it('is an optional peer whose range holds the version the repository tests with', () => {
    const range = manifest.peerDependencies['express-session'];
    expect(range).toBe('^1.17.0');
    const [major, minor] = installed.split('.').map(Number);
    expect(major === 1 && minor! >= 17, `express-session ${installed} within ${range}`).toBe(true);
    expect(manifest.peerDependenciesMeta['express-session']).toEqual({ optional: true });
  });

  it("is named by the README's Install as a peer, with what needs it", () => {
    expect(installSection()).toMatch(/`express-session` is a peer/);
  });

  it('missing, the start token says to mount it', () => {
    const kit = createVerificationKit({
      baseUrl: 'https://verify.example.com',
      clientId: 'app',
      clientSecret: 'test-secret-0123456789',
      returnUrl: 'https://app.example.com/verify/return',
      store: createSqliteStore({ database: ':memory:' }),
      actions: [{ name: 'grant', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
      resolveUser: () => null,
    });
    let thrown: unknown;
    try {
      kit.csrfToken({} as never);
    } catch (error) {
      thrown = error;
    }
    expect(isKitError(thrown, KitErrorCode.InvalidOptions)).toBe(true);
    expect((thrown as Error).message).toMatch(/mount express-session \(app\.use\(session\(\{\.\.\.\}\)\)\)/);
  });
});
