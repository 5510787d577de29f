#!/usr/bin/env node
/** `hosted-sms-verify-kit <command> [options]`: the dispatcher on the process's arguments, environment and streams. */
import { runCli } from './dispatch.ts';

/** How long a finished command waits for its output to drain before it exits whatever is still open. */
const EXIT_GRACE_MS = 2_000;

process.exitCode = await runCli(process.argv.slice(2), process.env);
// The command is done: a handle a configuration left open (a timer, a socket, a pool it never
// ended) must not keep a scheduled job running into the next one. Its output gets a moment to drain.
setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
