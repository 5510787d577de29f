/** Actions the suites share. */
import type { ActionDefinition } from '../../middleware/index.ts';

/** The action that texts the number typed into the start form's `phone` field, and proves it. */
export function addPhoneAction(fulfil: ActionDefinition<unknown>['fulfil'] = () => {}): ActionDefinition<unknown> {
  return {
    name: 'add_phone',
    operationSensitivity: 'normal',
    successPath: '/done/phone',
    destination: 'entered',
    proves: 'destination',
    fulfil,
  };
}
