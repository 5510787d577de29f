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
  if (body.length === 0 || steps.length === 0 || steps.length < codings.length) return asText(res, body);
  try {
    let out = body;
    for (const decompress of steps.reverse()) out = decompress(out, { maxOutputLength: MAX_BODY_BYTES });
    return asText(res, out);
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

/** A byte order mark, and the encoding a browser reads a body that starts with it in, whatever its header says. */
const BYTE_ORDER_MARKS: readonly [readonly number[], string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xff, 0xfe], 'utf-16le'],
  [[0xfe, 0xff], 'utf-16be'],
];

/**
 * The bytes as text, as a browser decodes them: in the encoding a byte order mark names, else the
 * charset the Content-Type names (a page in UTF-16 shows its reader what UTF-8 would hide), else
 * UTF-8; a charset no decoder knows is read as UTF-8, as browsers fall back.
 */
function asText(res: IncomingMessage, bytes: Buffer): string {
  const marked = BYTE_ORDER_MARKS.find(([mark]) => mark.every((byte, i) => bytes[i] === byte));
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(String(res.headers['content-type'] ?? ''))?.[1];
  const label = marked?.[1] ?? charset ?? 'utf-8';
  try {
    // The mark is no part of the text; a browser drops it.
    return new TextDecoder(label, { ignoreBOM: false }).decode(bytes);
  } catch {
    return bytes.toString('utf8');
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
