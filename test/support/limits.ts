/**
 * Start-limit budgets for suites that start many attempts from one loopback IP but are not about
 * the limits: no test there meets a 429. The limits' own suites (test/limits/) keep the real ones.
 */
export const GENEROUS_START_LIMITS = {
  perUser: { points: 10_000, durationSeconds: 60 },
  perDestination: { points: 10_000, durationSeconds: 60 },
  perIp: { points: 10_000, durationSeconds: 60 },
  perUserNumbers: { points: 10_000, durationSeconds: 60 },
};
