/** Validation of the POST /session JSON body. The first failing rule decides the errorCode. */
import { isPlatform, schemeFitsPlatform, type EmulatorClient, type Platform } from '../config/config.ts';
import type { OperationSensitivity } from './sessions.ts';

/** E.164: "+", a non-zero country digit, 7 to 15 digits in all. */
export const E164 = /^\+[1-9]\d{6,14}$/;
export const TEXT_FIELD_MAX_LENGTH = 512;

export interface CreateRequest {
  returnUrl: string;
  destination: string;
  operationSensitivity: OperationSensitivity;
  userRef: string;
  state: string;
  platform: Platform;
}

export type Validation = { ok: true; value: CreateRequest } | { ok: false; errorCode: string; message: string };

function reject(errorCode: string, message: string): Validation {
  return { ok: false, errorCode, message };
}

function boundedText(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= TEXT_FIELD_MAX_LENGTH;
}

export function validateCreateRequest(body: unknown, client: EmulatorClient): Validation {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return reject('invalid_request', 'The body must be a JSON object.');
  }
  const input = body as Record<string, unknown>;
  const platform = input.platform ?? 'web';
  if (!isPlatform(platform)) return reject('invalid_request', 'platform must be "web" or "mobile" (default "web").');
  // Byte for byte: no normalisation of scheme, host, port, path, case, trailing slash or query.
  if (typeof input.returnUrl !== 'string' || input.returnUrl !== client.returnUrl) {
    return reject('invalid_return_url', 'returnUrl must equal the registered return URL exactly.');
  }
  if (!schemeFitsPlatform(input.returnUrl, platform)) {
    return reject(
      'invalid_return_url',
      platform === 'web'
        ? 'A web session needs an http or https returnUrl.'
        : 'A mobile session needs a custom-scheme deep link as returnUrl.',
    );
  }
  if (input.channel !== 'sms') return reject('invalid_channel', 'channel must be "sms".');
  if (typeof input.destination !== 'string' || !E164.test(input.destination)) {
    return reject('destination_required', 'destination must be a phone number in E.164 form, e.g. +15551234567.');
  }
  if (input.operationSensitivity !== 'normal' && input.operationSensitivity !== 'sensitive') {
    return reject('invalid_operation_sensitivity', 'operationSensitivity must be "normal" or "sensitive".');
  }
  if (!boundedText(input.userRef))
    return reject('invalid_request', `userRef must be a string of 1 to ${TEXT_FIELD_MAX_LENGTH} characters.`);
  if (!boundedText(input.state))
    return reject('invalid_request', `state must be a string of 1 to ${TEXT_FIELD_MAX_LENGTH} characters.`);
  return {
    ok: true,
    value: {
      returnUrl: input.returnUrl,
      destination: input.destination,
      operationSensitivity: input.operationSensitivity,
      userRef: input.userRef,
      state: input.state,
      platform,
    },
  };
}
