/**
 * Which environment variables the kit's logger and the sweep job treat as secrets: a name that says
 * so in any common spelling (`DB_PASS` and `MYSQL_PWD` were printed in full when an error quoted
 * them), never the working directory (PWD), whose redaction would garble every path printed.
 */
import { describe, expect, it } from 'vitest';
import { environmentSecrets } from '../../middleware/errors.ts';
import { defaultLogger } from '../../middleware/logger.ts';

const SECRET_NAMES = [
  'CLIENT_SECRET',
  'PGPASSWORD',
  'DB_PASS',
  'PASS',
  'MYSQL_PWD',
  'SMTP_PASSWD',
  'GPG_PASSPHRASE',
  'GITHUB_TOKEN',
  'STRIPE_API_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'db_pass',
];
const ORDINARY_NAMES = ['PWD', 'OLDPWD', 'PGPASSFILE', 'PATH', 'HOME', 'NODE_ENV', 'PASSENGER_APP_ENV'];

describe('environmentSecrets', () => {
  it.each(SECRET_NAMES)('%s is a secret', (name) => {
    expect(environmentSecrets({ [name]: `value-of-${name}` })).toEqual([`value-of-${name}`]);
  });

  it.each(ORDINARY_NAMES)('%s is not', (name) => {
    expect(environmentSecrets({ [name]: '/srv/app/current' })).toEqual([]);
  });

  it("the default logger hides DB_PASS's value and still shows the working directory", () => {
    const lines: string[] = [];
    const logger = defaultLogger({ DB_PASS: 'Tr0ub4dor&3', PWD: '/srv/app' }, (_level, line) => lines.push(line));
    logger.error({ note: 'login as app with Tr0ub4dor&3 failed in /srv/app' }, 'store unavailable');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('Tr0ub4dor');
    expect(lines[0]).toContain('/srv/app');
  });
});
