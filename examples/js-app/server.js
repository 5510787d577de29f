// node server.js: the app on PORT (default 3000), with the sweep in this process for users who
// close the tab (or run `npm run sweep` from a scheduler instead).
import { createApp } from './app.js';

const app = createApp();
const sweep = app.locals.kit.startSweepWorker({ intervalMs: 60_000 });
const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`Listening on http://localhost:${server.address().port}`);
});
process.once('SIGTERM', async () => {
  await sweep.stop();
  server.close(() => app.locals.close());
});
