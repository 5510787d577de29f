/** What an operator's call refused as bad input answers with. */
import { expect } from 'vitest';
import { isKitError, KitErrorCode } from '../../middleware/errors.ts';

/** The message of the `invalid_options` KitError `act` rejects with; fails the test if it resolves or rejects otherwise. */
export async function optionsRefusal(act: Promise<unknown>): Promise<string> {
  const error = await act.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isKitError(error, KitErrorCode.InvalidOptions), String(error)).toBe(true);
  return (error as Error).message;
}
