/**
 * Before anything else, the audit confirms it attacks an app wired to the emulator: the emulator's
 * control API answers, the app's kit calls that emulator, and the first start is one the emulator
 * knows. A miswired app never creates a session or sends a text anywhere.
 */
import { parseHandoffPage } from './agent.ts';
import { describeThrown } from './hooks.ts';
import type { ResolvedAuditOptions } from './options.ts';
import { sameService } from './service-url.ts';
import type { AuditWorld } from './world.ts';

/**
 * The control API answers (only an emulator has one) and the app's kit calls that emulator (its
 * `serviceUrl`), both before any start; then one user signs in and starts one attempt, which the
 * emulator must know. Otherwise the run stops: returns why.
 */
export async function confirmEmulator(world: AuditWorld): Promise<string | undefined> {
  const { emulatorUrl } = world.options;
  try {
    await world.control.stats();
  } catch (error) {
    return `the emulator's control API at ${emulatorUrl} did not answer (${describeThrown(error)}); start the emulator with control on and pass its url as \`emulatorUrl\``;
  }
  const miswired = kitCallsAnotherService(world.options);
  if (miswired !== undefined) return miswired;
  let handoff: string;
  try {
    const user = await world.signIn();
    const answer = await world.postStart(user);
    const page = parseHandoffPage(answer.body);
    if (answer.status !== 200 || page === undefined) {
      return `the first start answered ${answer.status}, not the kit's handoff page; check \`signIn\` and \`actions\``;
    }
    handoff = page.handoff;
    world.handoffs.add(handoff);
  } catch (error) {
    return `the first sign-in and start failed: ${describeThrown(error)}`;
  }
  try {
    const session = await world.control.sessionByHandoff(handoff);
    world.recordAttempt(session);
    return undefined;
  } catch {
    return `the emulator at ${emulatorUrl} does not know the attempt your app just started: your app's kit talks to another service (its \`baseUrl\`); point the kit at this emulator, or \`emulatorUrl\` at the one the kit uses. Nothing else was sent`;
  }
}

/** The service the app's kit calls: the kit is the app's, and its getter may throw (a kit built lazily). */
function serviceUrlOf(options: ResolvedAuditOptions): unknown {
  const { kit, serviceUrl = kit?.serviceUrl } = options;
  return serviceUrl;
}

/** Why the app's kit is not known to call the emulator given (nothing was started), if so. */
function kitCallsAnotherService(options: ResolvedAuditOptions): string | undefined {
  const { emulatorUrl } = options;
  let serviceUrl: unknown;
  try {
    serviceUrl = serviceUrlOf(options);
  } catch (error) {
    return `your kit's serviceUrl could not be read (${describeThrown(error)}); pass \`serviceUrl\` (the baseUrl your kit was given). Nothing was started`;
  }
  if (typeof serviceUrl !== 'string') {
    return "the audit cannot tell which service your app's kit calls: pass `kit` (your app's kit) or `serviceUrl` (the baseUrl your kit was given). Nothing was started";
  }
  if (sameService(serviceUrl, emulatorUrl)) return undefined;
  return `your app's kit calls the service at ${serviceUrl}, not the emulator at ${emulatorUrl}: point the kit's baseUrl at this emulator, or \`emulatorUrl\` at the one the kit uses. Nothing was started`;
}
