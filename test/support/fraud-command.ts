/**
 * `hosted-sms-verify-kit fraud` as built, on a store: its configuration modules, and two ways to run
 * it on the same arguments and environment: the bin, a node process of its own, and the dispatcher
 * the bin runs, in this process, reading what it prints and its exit code.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as Dispatch from '../../cli/dispatch.ts';
import { builtFile } from './built.ts';

const MAIN = builtFile('cli/main.js');
const { runCli } = (await import(builtFile('cli/dispatch.js'))) as typeof Dispatch;
const SQLITE = builtFile('middleware/store/sqlite/sqlite.js');
const POSTGRES = builtFile('middleware/store/postgres/postgres.js');
// The configuration module sits outside the repository: it names the driver by its path.
const PG = createRequire(import.meta.url).resolve('pg');

export interface Answer {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * In `dir`: verify.config.mjs on the store at `at` (a database URL, or a SQLite file),
 * refusing.config.mjs the same with the kit's own `pumping` option, and empty.config.mjs on the
 * store at `emptyAt`. Each is a function of env, so each run in one process opens a store of its
 * own (a module is evaluated once), as each run of the bin does.
 */
export function writeFraudConfigs(dir: string, kind: 'sqlite' | 'postgres', at: string, emptyAt: string): void {
  const opened = (on: string) =>
    kind === 'postgres'
      ? `import pg from ${JSON.stringify(PG)}; import { createPostgresStore } from ${JSON.stringify(POSTGRES)};
         export default () => { const pool = new pg.Pool({ connectionString: ${JSON.stringify(on)} });
         return { close: () => pool.end(), kit: {`
      : `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
         export default () => { return { close: () => {}, kit: {`;
  const storeLine = (on: string) =>
    kind === 'postgres'
      ? 'store: createPostgresStore({ pool }),'
      : `store: createSqliteStore({ database: ${JSON.stringify(on)} }),`;
  const optionsOn = (on: string) => `${opened(on)}
       baseUrl: 'http://127.0.0.1:9', clientId: 'fraud-client', clientSecret: 'fraud-secret-0123456789abcdef',
       returnUrl: 'http://localhost:3998/verify/return', ${storeLine(on)}
       actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],`;
  writeFileSync(join(dir, 'verify.config.mjs'), `${optionsOn(at)} } }; };`);
  // The kit's options with its own `pumping` option (an object, as a ready kit's `pumping` is).
  writeFileSync(
    join(dir, 'refusing.config.mjs'),
    `${optionsOn(at)} pumping: { mode: 'refuse', thresholds: { country: { dailyFloor: 12 } } } } }; };`,
  );
  writeFileSync(join(dir, 'empty.config.mjs'), `${optionsOn(emptyAt)} } }; };`);
}

/** The bin, a node process of its own in `dir`, on verify.config.mjs. */
export function fraudBin(dir: string, ...args: string[]): Promise<Answer> {
  const options = { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, 'fraud', ...args, '--config', 'verify.config.mjs'],
      options,
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

/** The dispatcher the bin runs, in this process, on the bin's environment, on `config` in `dir`. */
export async function fraudHere(dir: string, config: string, ...args: string[]): Promise<Answer> {
  const answer = { code: 0, stdout: '', stderr: '' };
  const output = {
    write: (text: string) => void (answer.stdout += text),
    warn: (text: string) => void (answer.stderr += text),
  };
  const argv = ['fraud', ...args, '--config', join(dir, config)];
  answer.code = await runCli(argv, { PATH: process.env.PATH ?? '' }, output);
  return answer;
}
