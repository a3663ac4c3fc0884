import { isDataError, isDuplicateKeyError, isOutOfMemoryError, toConnectorError } from '../../../connectors/local/duckdb-errors';

const error = (message: string) => new Error(message);

test('every form of running out of memory is one: in a statement, and at COMMIT allocating or pinning a block', () => {
  for (const text of [
    'Out of Memory Error: could not allocate block of size 256.0 KiB (127.9 MiB/128.0 MiB used)',
    'TransactionContext Error: Failed to commit: could not allocate block of size 256.0 KiB (127.8 MiB/128.0 MiB used)',
    'TransactionContext Error: Failed to commit: failed to pin block of size 256.0 KiB (127.8 MiB/128.0 MiB used)',
  ]) {
    expect(isOutOfMemoryError(error(text))).toBe(true);
    expect(toConnectorError('/w.duckdb', error(text)).details.reason).toBe('out-of-memory');
  }
  expect(isOutOfMemoryError(error('TransactionContext Error: Failed to commit: disk full'))).toBe(false);
});

test('a duplicate key is the database state, not the record: never a data error that would dead-letter it', () => {
  const duplicate = error('Constraint Error: Duplicate key "_id: 0190a000-0000-7000-8000-000000000001" violates primary key constraint.');
  expect(isDuplicateKeyError(duplicate)).toBe(true);
  expect(isDataError(duplicate)).toBe(false);
  expect(toConnectorError('/w.duckdb', duplicate).kind).toBe('retryable');
  expect(isDataError(error('Conversion Error: Could not convert string "x" to INT64'))).toBe(true);
  expect(isDataError(error('Constraint Error: NOT NULL constraint failed: users._uid'))).toBe(true);
});
