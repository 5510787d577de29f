/**
 * Set-up run before every test file is imported. Files share a worker process (vitest's `isolate:
 * false`), and the kit redacts every run of 8 characters of each client secret it was given from
 * its messages: a secret of an earlier file ("…-character-…") would cut words out of this file's
 * messages. Each file starts with no secret remembered, as a process of its own would.
 */
import { forgetRememberedSecrets } from '../../middleware/errors.ts';

forgetRememberedSecrets();
