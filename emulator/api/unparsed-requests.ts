/**
 * Requests node refuses before the app sees them: headers past its limit, a request line or header
 * it cannot parse, a request that took too long to arrive. Node's own answer has no body; the
 * service's failing responses carry an `errorCode`, so the emulator answers these with its error
 * body too, and closes the connection as node would.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

const REFUSALS: Record<string, { status: number; errorCode: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    errorCode: 'request_headers_too_large',
    message: 'The request headers are larger than the service accepts.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    errorCode: 'request_timeout',
    message: 'The request did not arrive in time.',
  },
};
const UNPARSED = { status: 400, errorCode: 'invalid_request', message: 'The request is not valid HTTP.' };

/** The server's 'clientError' listener. */
export function answerUnparsedRequest(error: Error & { code?: string }, socket: Duplex): void {
  // A connection the client reset, or one already answered: nothing can be written.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, errorCode, message } = REFUSALS[error.code ?? ''] ?? UNPARSED;
  const body = JSON.stringify({ isSuccess: false, errorCode, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
