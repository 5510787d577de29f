/**
 * The kit's masking of numbers in a message (every log line of the integrator's errors goes through
 * it) masks a number written before an `@`, as an address keyed by a number is: a WhatsApp id, a
 * SIP URI, an email-to-SMS gateway.
 */
import { expect, it } from 'vitest';
import { describeError } from '../../middleware/logger.ts';

it.each(['no account for 447700900456@s.whatsapp.net', 'no route to sip:+447700900456@carrier.example'])(
  'logs the error %j with its number masked',
  (message) => {
    const logged = describeError(new Error(message));
    expect(String(logged.message)).not.toContain('7700900456');
    expect(String(logged.message)).toContain('\u00a056@');
  },
);
