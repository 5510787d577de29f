// Imports the entries named in argv[2] (comma-separated) and says whether better-sqlite3 was
// loaded. It is CommonJS: Node's CommonJS loader records it in require.cache, also when an ES
// module imports it.
import { createRequire } from 'node:module';

for (const entry of process.argv[2].split(',')) await import(entry);
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify({ betterSqlite3Loaded: loaded.some((path) => path.includes('/better-sqlite3/')) }));
