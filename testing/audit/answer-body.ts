/**
 * An answer's body as the audit's agent reads it: bounded, and decompressed as a browser
 * decompresses it.
 */
import type { IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** The most of one answer the agent reads: an audit compares pages, and a stream never ends. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const TOO_LONG = `answered more than ${MAX_BODY_BYTES / 1024 / 1024} MB; the audit reads no more of one answer (answer with a page, not a stream)`;

/** How a browser decompresses a body of each Content-Encoding it reads, its output bounded. */
const DECOMPRESS: Readonly<Record<string, (body: Buffer, options: { maxOutputLength: number }) => Buffer>> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/** Codings browsers read that the audit cannot: a body in one is not read as if it were text. */
const UNREADABLE = new Set(['zstd', 'dcb', 'dcz']);

/**
 * The body as a browser reads it: decompressed when its Content-Encoding says so (an app may
 * compress whatever the request accepts), every coding of a list in turn, the last applied first
 * (`gzip, br`: a compressed bundle compressed again); never past MAX_BODY_BYTES however small it
 * came. A list naming a coding no browser knows is read as it came, as browsers read it.
 */
function decoded(res: IncomingMessage, body: Buffer, stop: (why: string) => void): string | undefined {
  const codings = String(res.headers['content-encoding'] ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const encoding = codings.join(', ');
  const unreadable = codings.find((coding) => UNREADABLE.has(coding));
  if (unreadable !== undefined) {
    stop(`answered a body in a Content-Encoding the audit cannot read (${unreadable}), which browsers read`);
    return undefined;
  }
  const steps = codings.flatMap((coding) => DECOMPRESS[coding] ?? []);
  if (body.length === 0 || steps.length === 0 || steps.length < codings.length) return body.toString('utf8');
  try {
    let out = body;
    for (const decompress of steps.reverse()) out = decompress(out, { maxOutputLength: MAX_BODY_BYTES });
    return out.toString('utf8');
  } catch (error) {
    const tooLong = (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError;
    stop(
      tooLong
        ? `${TOO_LONG} once decompressed (${encoding})`
        : `answered a body its Content-Encoding (${encoding}) does not decode`,
    );
    return undefined;
  }
}

/** Hands `done` the answer's body as text; calls `stop` instead once it passes MAX_BODY_BYTES. */
export function readBody(res: IncomingMessage, stop: (why: string) => void, done: (body: string) => void): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  res.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes <= MAX_BODY_BYTES) {
      chunks.push(chunk);
    } else {
      stop(TOO_LONG);
    }
  });
  res.on('end', () => {
    const text = decoded(res, Buffer.concat(chunks), stop);
    if (text !== undefined) done(text);
  });
}
