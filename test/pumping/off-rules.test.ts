/**
 * With the rules off (`pumping: { mode: 'off' }`) an operator's block or release is refused and
 * nothing is written, on SQLite and PostgreSQL: no start reads the operators' rules then, so a
 * block kept would refuse nothing while `kit.pumping.block` and `fraud block` said it was in force.
 */
import { expect, it } from 'vitest';
import { appForTests } from '../support/app-for-tests.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { addPhoneAction } from '../support/actions.ts';
import { optionsRefusal as refusal } from '../support/options-refusal.ts';

describeEachAppStore('operators’ rules with the rules off', (_store, storeOptions) => {
  const app = appForTests(storeOptions, { actions: [addPhoneAction()], pumping: { mode: 'off' } });

  it('refuses a block and a release, saying the rules are off, and writes nothing; a start to that country is sent', async () => {
    expect(await refusal(app().kit.pumping.block({ country: 'NG' }))).toContain("mode: 'off'");
    expect(await refusal(app().kit.pumping.release({ block: '+2348031000' }, 6))).toContain("mode: 'off'");
    expect(await app().store.pumping!.listRules(0)).toEqual([]);
    expect(await app().kit.pumping.clear({ country: 'NG' })).toBe(false);
    // What such a block would have promised to refuse goes out: the rules are off.
    const user = await app().agent().signIn('someone');
    expect((await user.tryStartWithNumber('add_phone', '+2348031000001')).status).toBe(200);
  });
});
