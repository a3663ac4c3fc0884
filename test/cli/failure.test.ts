import { ReplyError } from 'ioredis';
import { describeFailure } from '../../src/cli/failure';
import { CliError } from '../../src/cli/context';

test("an operator's refusal is shown as it is", () => {
  expect(describeFailure(new CliError('No tracker with id shop.'))).toBe('No tracker with id shop.');
});

test("Redis's out-of-memory refusal: what happened and the way out, without the script", () => {
  const oom = new ReplyError("OOM command not allowed when used memory > 'maxmemory'. script: 5ab4c0ffee, on @user_script:589.");
  const text = describeFailure(oom);
  expect(text).toMatch(/^Redis is at its memory limit \(maxmemory\): nothing was changed\. Free memory/);
  expect(text).toContain('tributary dlq discard');
  expect(text).not.toMatch(/script|OOM/);
});

test('another Redis refusal: named as one, without the script it came from', () => {
  expect(describeFailure(new ReplyError('NOSCRIPT No matching script. script: 5ab4c0ffee, on @user_script:1.'))).toBe('Redis refused the command: NOSCRIPT No matching script.');
});

test('a lost connection says so, and what to check', () => {
  expect(describeFailure(new Error('Connection is closed.'))).toMatch(/^lost the connection to Redis \(Connection is closed\.\); .*REDIS_URL/);
});

test('anything else still says what failed, never a bare "unexpected error"', () => {
  const text = describeFailure(new TypeError("Cannot read properties of undefined (reading 'id')"));
  expect(text).toBe("the command failed: Cannot read properties of undefined (reading 'id')");
});
