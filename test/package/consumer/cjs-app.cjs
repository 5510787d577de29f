// A CommonJS integrator: require() of the ESM package (Node >= 20.19 loads ESM from require).
const kit = require('hosted-sms-verify-kit');
const testing = require('hosted-sms-verify-kit/testing');

console.log(
  JSON.stringify({
    createVerificationKit: typeof kit.createVerificationKit,
    createSqliteStore: typeof kit.createSqliteStore,
    startSweepWorker: typeof kit.startSweepWorker,
    kitErrorCodes: Object.keys(kit.KitErrorCode).length,
    startEmulator: typeof testing.startEmulator,
    emulatorControl: typeof testing.emulatorControl,
  }),
);
