/**
 * The one logger type of the kit, the sweep, the worker and the job (pino-compatible), and the
 * helpers every module uses to log without leaking: errors are described by code and message only.
 */
import { KitError } from './errors.ts';

/** Pino-compatible: `logger.info({ ...fields }, 'message')`. */
export interface KitLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
}

/** The default: logs nothing. */
export const silentLogger: KitLogger = { info() {}, warn() {}, error() {} };

/** The logger with every call guarded: a throwing logger never disturbs a request or a sweep. */
export function safeLogger(logger: KitLogger): KitLogger;
export function safeLogger(logger: KitLogger | undefined): KitLogger | undefined;
export function safeLogger(logger: KitLogger | undefined): KitLogger | undefined {
  if (logger === undefined) return undefined;
  const guard =
    (level: keyof KitLogger) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      try {
        logger[level](obj, msg);
      } catch {
        // nothing sensible to do: logging is best effort
      }
    };
  return { info: guard('info'), warn: guard('warn'), error: guard('error') };
}

/** A loggable description of an error: code and message only (never a cause with headers). */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof KitError) {
    return {
      code: error.code,
      message: error.message,
      ...(error.serviceStatus === undefined ? {} : { serviceStatus: error.serviceStatus }),
    };
  }
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { message: String(error) };
}
