import { PassThrough } from 'node:stream';
import { createProgress } from '../../src/cli/progress';

/** A stream that says it is a terminal, and keeps what was written to it. */
function fakeStream(isTTY: boolean): PassThrough & { isTTY: boolean; columns: number; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY, columns: 100, text: (): string => '' });
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  stream.text = () => chunks.join('');
  // cli-progress moves the cursor on terminals; the fake only needs to accept the calls.
  Object.assign(stream, { cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
  return stream;
}

test('draws a bar on a terminal once there is more than one step, ending at the total', () => {
  const stream = fakeStream(true);
  const progress = createProgress('Replaying', stream);
  progress.update(500, 1200);
  progress.update(1000, 1200);
  progress.update(1200, 1200);
  progress.stop();
  const text = stream.text();
  expect(text).toContain('Replaying [');
  expect(text).toContain('1200/1200');
  expect(text).toContain('100%');
});

test('prints nothing when the first step finishes the work', () => {
  const stream = fakeStream(true);
  const progress = createProgress('Replaying', stream);
  progress.update(300, 300);
  progress.stop();
  expect(stream.text()).toBe('');
});

test('prints nothing off a terminal', () => {
  const stream = fakeStream(false);
  const progress = createProgress('Replaying', stream);
  progress.update(500, 1200);
  progress.update(1200, 1200);
  progress.stop();
  expect(stream.text()).toBe('');
});
