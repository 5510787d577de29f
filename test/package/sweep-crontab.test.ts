/**
 * The sweep job's crontab line (examples/sweep-job/crontab), run as cron runs it (`sh -c`) in a
 * scratch app directory: the `.env` it loads is read as data. A value holding `$`, backticks or
 * `$(...)` (a client secret, a database password) reaches the job as written, and nothing in it runs;
 * a shell's `. ./.env` would expand it, or run the command it holds.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './scratch.ts';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sweep-crontab-'));
  // The kit as npm installs it: its bin linked from node_modules/.bin.
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'hosted-sms-verify-kit'));
  symlinkSync('../hosted-sms-verify-kit/dist/cli/main.js', join(dir, 'node_modules', '.bin', 'hosted-sms-verify-kit'));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
  // The app's configuration, here recording the environment the job was given, then refusing to run.
  writeFileSync(
    join(dir, 'verify.config.js'),
    `import { writeFileSync } from 'node:fs';
const { VERIFY_CLIENT_SECRET, DATABASE_URL, PLAIN } = process.env;
writeFileSync('seen.json', JSON.stringify({ VERIFY_CLIENT_SECRET, DATABASE_URL, PLAIN }));
export default () => { throw new Error('recorded'); };
`,
  );
});

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The crontab's command, as cron hands it to `sh -c`, run from `dir` with its log there too. */
function crontabCommand(): string {
  const lines = readFileSync(join(ROOT, 'examples', 'sweep-job', 'crontab'), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
  expect(lines).toHaveLength(1);
  const command = lines[0]!.split(' ').slice(5).join(' '); // after the five schedule fields
  expect(command).toContain('cd /srv/app && ');
  expect(command).toContain('>> /var/log/verify-sweep.log 2>&1');
  return command.replace('/srv/app', dir).replace('/var/log/verify-sweep.log', join(dir, 'sweep.log'));
}

const runUnderSh = (command: string) =>
  new Promise<number | null>((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      // cron's own environment: a PATH with node, nothing of the app's.
      env: { PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter), HOME: dir },
      stdio: 'ignore',
    });
    child.once('error', reject);
    child.once('exit', resolve);
  });

describe('the sweep job’s crontab line', () => {
  it('reads .env as data: `$(...)`, backticks and `$` in values reach the job as written, and nothing runs', async () => {
    const ran = join(dir, 'ran');
    const values = {
      VERIFY_CLIENT_SECRET: `se$(touch ${ran})cret`,
      DATABASE_URL: `postgres://app:pa\`touch ${ran}-too\`ss$HOME@db/app`,
      PLAIN: 'plain-value',
    };
    writeFileSync(
      join(dir, '.env'),
      Object.entries(values)
        .map(([name, value]) => `${name}=${value}\n`)
        .join(''),
    );
    await runUnderSh(crontabCommand());
    expect(existsSync(ran), 'a command in .env ran').toBe(false);
    expect(existsSync(`${ran}-too`), 'a command in .env ran').toBe(false);
    expect(existsSync(join(dir, 'seen.json')), readFileSync(join(dir, 'sweep.log'), 'utf8')).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8'))).toEqual(values);
  }, 30_000);
});
