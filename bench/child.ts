import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** Messages between the benchmark and its children: a `type` and whatever that type carries. */
export interface Message {
  type: string;
  [key: string]: unknown;
}

const CHILDREN_TSCONFIG = path.join(__dirname, 'tsconfig.children.json');
const CHILDREN_OUT = path.join(__dirname, '..', 'node_modules', '.cache', 'bench-ingest');

/**
 * Compiles the child processes (and the src/ they import) with tsc, incrementally. Children run
 * as plain JavaScript, as `npm start` runs dist/: tsx's transform wraps every named closure in a
 * `__name()` call, which costs the request path something production never pays.
 */
export function buildChildren(): void {
  // The compiler's own file: TypeScript 7's package exports no `bin/tsc`, and resolving it by that
  // name threw inside the try below, so children ran whatever an earlier build had left.
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', CHILDREN_TSCONFIG], { stdio: 'inherit' });
  } catch {
    // tsc still emits on type errors (noEmitOnError is off): a half-finished edit elsewhere should not stop a measurement.
    console.error('bench: tsc reported type errors (above); running the JavaScript it emitted anyway.');
  }
}

/** Where buildChildren put the JavaScript of `file` (a path from the repository root, e.g. `src/boot/server.ts`). */
export function compiledPath(file: string): string {
  return path.join(CHILDREN_OUT, file.replace(/\.ts$/, '.js'));
}

/**
 * Runs a compiled module of bench/ in its own process with an IPC channel, so a server and the
 * load generator never share an event loop. `nodeArgs` go to that node (e.g. `--cpu-prof`).
 */
export function forkChild(file: string, env: Record<string, string> = {}, nodeArgs: string[] = []): ChildProcess {
  return fork(compiledPath(path.join('bench', file)), [], {
    execArgv: nodeArgs,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next message of `type` from the child; rejects if the child exits first or reports an error. */
export function nextMessage<T extends Message>(child: ChildProcess, type: string, timeoutMs = 120_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${type}: no answer from the child within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (msg: Message) => {
      if (msg.type === 'error') finish(new Error(String(msg.message)));
      else if (msg.type === type) finish(undefined, msg as T);
    };
    const onExit = (code: number | null, signal: string | null) => finish(new Error(`child exited (${code ?? signal}) while waiting for ${type}`));
    function finish(err?: Error, msg?: T): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(msg!);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Sends a request and waits for the reply of `replyType`. */
export async function ask<T extends Message>(child: ChildProcess, msg: Message, replyType: string, timeoutMs?: number): Promise<T> {
  const reply = nextMessage<T>(child, replyType, timeoutMs);
  child.send(msg);
  return reply;
}

/** Waits for the child to exit, killing it after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** For children: send a message to the parent. */
export function tellParent(msg: Message): void {
  process.send?.(msg);
}

/** For children: report a fatal error to the parent, then exit once the message is sent. */
export function failToParent(err: unknown): void {
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  if (process.send) process.send({ type: 'error', message }, () => process.exit(1));
  else {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
}

/**
 * For the comparison servers: listen on a free loopback port, tell the parent which, and close
 * (dropping keep-alive sockets) when the parent says stop.
 */
export function serveForParent(server: Server): void {
  server.keepAliveTimeout = 65_000;
  process.on('message', (msg: Message) => {
    if (msg.type === 'stop') {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    }
  });
  server.on('error', failToParent);
  server.listen(0, '127.0.0.1', () => tellParent({ type: 'listening', port: (server.address() as AddressInfo).port }));
}

/** The start scripts' node flags, so that a benchmark measures the server as it is started. */
export { serverNodeFlags } from '../test/helpers/start-flags';
