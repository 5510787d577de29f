/** The sample app's audit configuration without `stepUp`: the `step-up.*` checks do not apply to it. */
import type { AuditConfig } from '../../dist/testing/audit/command.js';
import sampleConfig from './sample.config.ts';

export default async function config(env: Record<string, string | undefined>): Promise<AuditConfig> {
  const { stepUp: _stepUp, ...options } = await sampleConfig(env);
  return options;
}
