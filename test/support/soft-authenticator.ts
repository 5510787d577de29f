/** The software passkey authenticator the `testing` entry's browser uses, for the emulator's own tests. */
export { SoftAuthenticator, type CeremonyInput } from '../../emulator/passkeys/soft-authenticator.ts';
