// What the number library costs a process that loads it, measured in a fresh one (plain node, no
// loader of the bench's own): the import of libphonenumber-js with its `max` metadata (the set the
// kit uses), then the first parse and getType of one number. Prints one JSON line.
import { performance } from 'node:perf_hooks';

const rssBefore = process.memoryUsage().rss;
const importStart = performance.now();
const { parsePhoneNumberWithError } = await import('libphonenumber-js/max');
const importMs = performance.now() - importStart;
const rssAfterImport = process.memoryUsage().rss;
const parseStart = performance.now();
const type = parsePhoneNumberWithError('07400 123456', { defaultCountry: 'GB' }).getType();
const firstParseMs = performance.now() - parseStart;
const rssAfterParse = process.memoryUsage().rss;

const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const ms = (value) => Math.round(value * 10) / 10;
process.stdout.write(
  `${JSON.stringify({
    importMs: ms(importMs),
    firstParseMs: ms(firstParseMs),
    type,
    rssBeforeMiB: mib(rssBefore),
    rssGrowthImportMiB: mib(rssAfterImport - rssBefore),
    rssGrowthMiB: mib(rssAfterParse - rssBefore),
  })}\n`,
);
