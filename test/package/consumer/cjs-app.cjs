// A CommonJS integrator: require() of the ESM package (Node >= 20.19 loads ESM from require).
const kit = require('hosted-sms-verify-kit');
const testing = require('hosted-sms-verify-kit/testing');
const sqlite = require('hosted-sms-verify-kit/sqlite');

console.log(
  JSON.stringify({
    createVerificationKit: typeof kit.createVerificationKit,
    createSqliteStore: typeof sqlite.createSqliteStore,
    runSweepJob: typeof kit.runSweepJob,
    // Internals stay internal: none of these may be on the package's surface.
    internalsExported: [
      'layout',
      'completeAttempt',
      'findReturnedAttempt',
      'deliverOutcomeEvents',
      'pendingScript',
      'runSweep',
      'startSweepWorker',
      'resolveKitOptions',
    ].filter((name) => name in kit),
    kitErrorCodes: Object.keys(kit.KitErrorCode).length,
    startEmulator: typeof testing.startEmulator,
    emulatorControl: typeof testing.emulatorControl,
  }),
);
