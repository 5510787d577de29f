/** The service's error body: `{ isSuccess: false, errorCode, message }`. Messages never carry a secret. */
import type { Response } from 'express';

export function sendError(res: Response, status: number, errorCode: string, message: string): void {
  res.status(status).json({ isSuccess: false, errorCode, message });
}
