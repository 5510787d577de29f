/**
 * The hosted page's two bindings. A device cookie per session marks the browser that redeemed that
 * session's handoff (one cookie per session, so two tabs of one browser each keep their own: the
 * cross-site POST that redeems a handoff never carries SameSite=Lax cookies, so a shared cookie
 * would be overwritten by the second tab);
 * the page-binding field `${sessionId}.${HMAC(sessionId, deviceId)}` ties the code form to the
 * session and that device, so no flow value needs to travel in a URL.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

const DEVICE_COOKIE_PREFIX = 'emu_device_';
/** Long enough for the OTP validity; the cookie is useless after its session ends. */
const DEVICE_COOKIE_MAX_AGE_MS = 30 * 60 * 1000;

export function deviceCookieName(sessionId: string): string {
  return `${DEVICE_COOKIE_PREFIX}${sessionId}`;
}
const DEVICE_ID = /^[A-Za-z0-9_-]{24}$/;

export function newDeviceId(): string {
  return randomBytes(18).toString('base64url');
}

export function deviceIdOf(req: Request, sessionId: string): string | undefined {
  const wanted = deviceCookieName(sessionId);
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === wanted && value !== undefined && DEVICE_ID.test(value)) return value;
  }
  return undefined;
}

export function setDeviceCookie(res: Response, sessionId: string, deviceId: string): void {
  // No Secure flag: the emulator serves plain http on loopback. Lax: the code form is same-site.
  res.cookie(deviceCookieName(sessionId), deviceId, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/verify',
    maxAge: DEVICE_COOKIE_MAX_AGE_MS,
  });
}

function mac(key: Buffer, sessionId: string, deviceId: string): string {
  return createHmac('sha256', key).update(`${sessionId}\u0000${deviceId}`).digest('base64url');
}

export function pageBinding(key: Buffer, sessionId: string, deviceId: string): string {
  return `${sessionId}.${mac(key, sessionId, deviceId)}`;
}

/** Splits a submitted binding; undefined when it is not even shaped like one. */
export function parsePageBinding(value: unknown): { sessionId: string; mac: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const dot = value.lastIndexOf('.');
  if (dot <= 0 || dot === value.length - 1) return undefined;
  return { sessionId: value.slice(0, dot), mac: value.slice(dot + 1) };
}

export function bindingMatches(key: Buffer, sessionId: string, deviceId: string, given: string): boolean {
  const expected = Buffer.from(mac(key, sessionId, deviceId));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
