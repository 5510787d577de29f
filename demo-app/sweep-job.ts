/**
 * The copyable sweep job: fulfils verifications whose user never came back to the landing page
 * (closed tab, lost network). Same env as the demo (.env.example); run it from cron, a systemd
 * timer or a Kubernetes CronJob:
 *
 *   npx tsx demo-app/sweep-job.ts --once          # one sweep, one JSON line, exit code
 *   npx tsx demo-app/sweep-job.ts                 # loop every --interval-seconds (default 60)
 *
 *   * * * * *  cd /srv/app && npx tsx demo-app/sweep-job.ts --once >> /var/log/sweep.log 2>&1
 *
 * Exit codes (from the kit's runSweepJob): 0 ok, 1 configuration error, 2 the service could not
 * be reached at all, 3 the sweep failed (e.g. the database). The client secret is never printed.
 */
import { runSweepJob } from 'hosted-sms-verify-kit';
import { demoSweepKit } from './kit-deps.ts';

process.exitCode = await runSweepJob({
  kit: (env, job) => demoSweepKit(env as NodeJS.ProcessEnv, job),
  argv: process.argv.slice(2),
  env: process.env,
});
