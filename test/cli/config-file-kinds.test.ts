/**
 * `--config FILE` naming something node will not load as a module (a TypeScript file, a JSON file,
 * a directory) is refused with a sentence naming what to give instead, by the sweep job and by the
 * audit; node's own words (Unknown
 * file extension ".ts", needs an import attribute of type "json", Directory import … is not
 * supported resolving ES modules imported from …/config-file.js) name no fix. A module that itself
 * imports such a file keeps node's error, which is about that file. Runs the bin as built (node
 * loads the module, not the test runner): needs `npm run build`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const FIX =
  'name a JavaScript module (.js, .mjs or .cjs; compile a TypeScript one first) whose default export is the ' +
  'configuration: its store and actions are code.';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-config-kinds-'));
  writeFileSync(join(dir, 'verify.config.ts'), 'const options: { store?: unknown } = {};\nexport default options;\n');
  writeFileSync(join(dir, 'verify.config.json'), '{ "clientId": "kinds-client" }\n');
  mkdirSync(join(dir, 'config'));
  writeFileSync(
    join(dir, 'imports-json.config.mjs'),
    "import data from './verify.config.json';\nexport default data;\n",
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `sweep --once --config file`: its exit code and the message of its one line. */
function sweepWith(file: string): Promise<{ code: number; message: unknown }> {
  return new Promise((resolve) => {
    const options = { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 };
    execFile(process.execPath, [MAIN, 'sweep', '--once', '--config', file], options, (error, stdout) => {
      const line = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { event?: unknown; message?: unknown };
      resolve({
        code: error === null ? 0 : Number(error.code),
        message: line.event === 'sweep_config_error' ? line.message : line,
      });
    });
  });
}

describe('sweep --config naming a file node does not load as a module', () => {
  it('a TypeScript file: exit 1 naming what to give (where node strips types itself, the module is read)', async () => {
    const run = await sweepWith('./verify.config.ts');
    if ((process.features as { typescript?: unknown }).typescript === undefined) {
      expect(run).toEqual({
        code: 1,
        message: `--config ./verify.config.ts: node does not load a .ts file as a module; ${FIX}`,
      });
    } else {
      expect(run).toEqual({ code: 1, message: expect.stringMatching(/^createVerificationKit: /) });
    }
  });

  it('a JSON file: exit 1 naming what to give', async () => {
    expect(await sweepWith('./verify.config.json')).toEqual({
      code: 1,
      message: `--config ./verify.config.json: node does not load a JSON file as a module; ${FIX}`,
    });
  });

  it('a directory: exit 1 naming the module in it to give', async () => {
    expect(await sweepWith('./config')).toEqual({
      code: 1,
      message: '--config ./config: is a directory; name the module in it (e.g. --config ./config/verify.config.js).',
    });
  });

  it('a module that imports a JSON file keeps node error, about that file', async () => {
    const run = await sweepWith('./imports-json.config.mjs');
    expect(run.code).toBe(1);
    expect(run.message).toEqual(expect.stringContaining(`file://${join(dir, 'verify.config.json')}`));
    expect(run.message).not.toEqual(expect.stringContaining(FIX));
  });
});

/** `audit --config file`: its exit code and what it printed. */
function auditWith(file: string): Promise<{ code: number; printed: string }> {
  return new Promise((resolve) => {
    const options = { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 };
    execFile(process.execPath, [MAIN, 'audit', '--config', file], options, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), printed: `${stdout}${stderr}` });
    });
  });
}

describe('audit --config naming a file node does not load as a module', () => {
  it('a JSON file, a directory and (where node does not strip types) a TypeScript file: exit 1 naming what to give', async () => {
    const kinds = [
      ['./verify.config.json', `--config ./verify.config.json: node does not load a JSON file as a module; ${FIX}`],
      [
        './config',
        '--config ./config: is a directory; name the module in it (e.g. --config ./config/verify.config.js).',
      ],
    ];
    if ((process.features as { typescript?: unknown }).typescript === undefined) {
      kinds.push([
        './verify.config.ts',
        `--config ./verify.config.ts: node does not load a .ts file as a module; ${FIX}`,
      ]);
    }
    for (const [file, said] of kinds) {
      const run = await auditWith(file!);
      expect(run.code, file).toBe(1);
      expect(run.printed, file).toContain(said);
      expect(run.printed, file).not.toMatch(/command-config\.js|Directory import|import attribute/);
    }
  });
});
