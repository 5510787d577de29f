/**
 * The README's smallest complete app, copied as the README shows it and run as `node server.mjs`
 * without `SESSION_SECRET`: it refuses to start, with one line naming the variable and no stack.
 * Started anyway, every request would get express-session's 500 with its stack on the page.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeAppDir } from './scratch.ts';

let dir: string;

beforeAll(() => {
  dir = readmeAppDir('readme-session-secret-');
});

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** `node server.mjs` in the scratch app: its exit code (null if it was still running after 10 s) and output. */
async function startServer(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['server.mjs'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 10_000))]);
  if (code !== 'running') return { code, stdout, stderr };
  child.kill('SIGTERM');
  await exited;
  return { code: null, stdout, stderr };
}

describe("the README app's start", () => {
  it.each([
    ['without SESSION_SECRET', {}],
    ['with an empty SESSION_SECRET', { SESSION_SECRET: '' }],
  ])(
    '%s refuses to start, with one line that names the variable and no stack',
    async (_, given) => {
      const { SESSION_SECRET: _inherited, ...inherited } = process.env as Record<string, string>;
      const started = await startServer({
        ...inherited,
        VERIFY_BASE_URL: 'http://127.0.0.1:9',
        VERIFY_CLIENT_ID: 'readme-app',
        VERIFY_CLIENT_SECRET: 'readme-app-secret-0123456789',
        VERIFY_RETURN_URL: 'http://localhost:3000/verify/return',
        DATABASE_PATH: join(dir, 'app.sqlite'),
        PORT: '0',
        ...given,
      });
      expect(started.code, 'it started and served').toBe(1);
      expect(started.stdout).toBe('');
      expect(started.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^Set SESSION_SECRET\b/)]);
      expect(started.stderr).not.toContain('readme-app-secret');
    },
    30_000,
  );
});
