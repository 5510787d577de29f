/**
 * The suites run on the Express major their vitest project names: `express5` (the `express`
 * package) and `express4` (the same suites' `express` resolved to the `express4` package, which is
 * Express 4). Without this, a broken alias would run Express 5 twice and still look green.
 */
import { createRequire } from 'node:module';
import express from 'express';
import express4 from 'express4';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const versionOf = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
const expected = process.env.EXPECTED_EXPRESS_MAJOR;

describe(`the kit's suites in this project run on Express ${expected}`, () => {
  it(`imports of 'express' load Express ${expected}`, () => {
    const loaded = express === (express4 as unknown) ? versionOf('express4') : versionOf('express');
    expect(loaded.split('.')[0]).toBe(expected);
  });
});
