/** The two apps compared, kit and baseline: their processes, their users' sign-in, their seeded attempts. */
import { config } from '../config.ts';
import type { SeedAttempt } from '../common.ts';
import { spawnChild, type Child } from '../ipc.ts';
import { seedVerifiedSessions, type SeedClient } from '../seed.ts';

export interface Side {
  name: 'kit' | 'baseline';
  child: Child;
  origin: string;
  client: SeedClient;
}

/** A kit app and a baseline app, each in its own process, listening (the ports go into their returnUrls). */
export interface AppPair {
  kit: Child;
  baseline: Child;
  ports: [number, number];
}

/** Forks both app processes (added to `children`, which the caller stops) and waits for their ports. */
export async function spawnAppPair(children: Child[]): Promise<AppPair> {
  const [kit, baseline] = await Promise.all([spawnApp('kit', children), spawnApp('baseline', children)]);
  return { kit: kit.child, baseline: baseline.child, ports: [kit.port, baseline.port] };
}

/** Forks one app process (added to `children`, which the caller stops) and waits for its port. */
export async function spawnApp(mode: Side['name'], children: Child[]): Promise<{ child: Child; port: number }> {
  const child = spawnChild('./children/app-child.ts', mode);
  children.push(child);
  const { port } = await child.call<{ port: number }>('port', undefined, 60_000);
  return { child, port };
}

export function sidesOf(apps: AppPair, kitClient: SeedClient, baseClient: SeedClient): [Side, Side] {
  return [
    { name: 'kit', child: apps.kit, origin: `http://127.0.0.1:${apps.ports[0]}`, client: kitClient },
    { name: 'baseline', child: apps.baseline, origin: `http://127.0.0.1:${apps.ports[1]}`, client: baseClient },
  ];
}

export async function login(side: Side, user: string): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${side.origin}/bench/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `user=${encodeURIComponent(user)}`,
    redirect: 'manual',
  });
  const setCookie = response.headers.get('set-cookie');
  const body = (await response.json()) as { csrf?: string };
  if (!response.ok || setCookie === null || typeof body.csrf !== 'string')
    throw new Error(`${side.name}: login failed (${response.status})`);
  return { cookie: setCookie.split(';', 1)[0]!, csrf: body.csrf };
}

export async function seedSide(
  emulatorUrl: string,
  side: Side,
  count: number,
  userRef: (i: number) => string,
): Promise<SeedAttempt[]> {
  const attempts = await seedVerifiedSessions(emulatorUrl, side.client, count, userRef, {
    concurrency: config.seedConcurrency,
  });
  for (let i = 0; i < attempts.length; i += 5000)
    await side.child.call('seed', { attempts: attempts.slice(i, i + 5000) });
  return attempts;
}

export function landingPath(a: SeedAttempt): string {
  return `/verify/return?session_id=${encodeURIComponent(a.sessionId)}&state=${encodeURIComponent(a.state)}`;
}
