import { createServer } from 'node:net';

/**
 * Ports for the servers a test starts (relays, Redis, PostgreSQL), from a block of its own for each
 * jest worker, below Linux's ephemeral range (32768–60999).
 *
 * Why not `listen(0)`: a port the kernel picked and the test freed again can be picked again before
 * the test's server binds it, by another worker asking the same, or as the local port of any
 * outgoing connection (every Redis client, every fetch). A relay whose port was taken exits, and a
 * test that asks "/readyz" on that port may get its answer from another test's relay. Below the
 * ephemeral range the kernel picks nothing, and the blocks keep the workers apart; within a worker
 * tests run one at a time, and a port still held (a server of an earlier file shutting down, a
 * service of the machine) is skipped.
 */
const FIRST_PORT = 20_000;
const PORTS_PER_WORKER = 1_000;
const WORKER_BLOCKS = 12;

const worker = Number(process.env.JEST_WORKER_ID ?? '1');
const base = FIRST_PORT + ((Math.max(worker, 1) - 1) % WORKER_BLOCKS) * PORTS_PER_WORKER;
// Each test file loads this module afresh: a random start keeps consecutive files off each other's ports.
let next = Math.floor(Math.random() * PORTS_PER_WORKER);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A port of this worker's block that nothing listens on now. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORTS_PER_WORKER; tried++) {
    const port = base + (next++ % PORTS_PER_WORKER);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${base}–${base + PORTS_PER_WORKER - 1} (jest worker ${worker})`);
}
