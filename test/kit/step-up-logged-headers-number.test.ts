/**
 * A request header the kit quotes in a log line is the sender's text and may carry a number (a
 * body type `text/+15550001111`, an Origin `https://15550001111.example`): the line never repeats it, as any other text the kit logs that
 * it did not write itself.
 */
import { expect, it } from 'vitest';
import { useStepUpApp } from '../support/step-up.ts';

const suite = useStepUpApp(() => Promise.resolve({}));
const DIGITS = '5550001111';

const loggedNumber = (from: number) => suite.app.logs.slice(from).filter((line) => line.includes(DIGITS));

it('a refused body type naming a number: 400, and the log line does not repeat the number', async () => {
  const tess = await suite.app.agent().signIn('tess');
  const from = suite.app.logs.length;
  const sent = await tess.request('/accounts/acct-t/payee', {
    method: 'POST',
    headers: { 'content-type': `text/+1${DIGITS}`, origin: tess.origin, 'sec-fetch-site': 'same-origin' },
    body: 'iban=X',
  });
  expect(sent.status).toBe(400);
  expect(sent.body).not.toContain(DIGITS);
  expect(suite.app.logs.slice(from).some((line) => line.includes('cannot be kept while you confirm'))).toBe(true);
  expect(loggedNumber(from)).toEqual([]);
});

it('an Origin naming a number, refused: 403, and the log line does not repeat the number', async () => {
  const tess = await suite.app.agent().signIn('tess');
  const from = suite.app.logs.length;
  const sent = await tess.request('/accounts/acct-t/payee', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: `https://${DIGITS}.example`,
      'sec-fetch-site': 'same-site',
    },
    body: 'iban=X',
  });
  expect(sent.status).toBe(403);
  expect(sent.body).not.toContain(DIGITS);
  expect(suite.app.logs.slice(from).some((line) => line.includes('came from another origin'))).toBe(true);
  expect(loggedNumber(from)).toEqual([]);
});

it('an Origin that is an address, refused: the log line quotes it, as it names no number', async () => {
  const tess = await suite.app.agent().signIn('tess');
  const from = suite.app.logs.length;
  const sent = await tess.request('/accounts/acct-t/payee', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'http://192.168.100.200:8080',
      'sec-fetch-site': 'same-site',
    },
    body: 'iban=X',
  });
  expect(sent.status).toBe(403);
  expect(suite.app.logs.slice(from).some((line) => line.includes('http://192.168.100.200:8080'))).toBe(true);
});
