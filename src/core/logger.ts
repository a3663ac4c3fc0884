import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout. Tokens and credentials are redacted wherever they appear in a logged object. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'tributary' },
      redact: {
        paths: ['authorization', 'token', '_token', '*.authorization', '*.token', '*._token', 'headers.authorization', 'req.headers.authorization', 'credentials', '*.credentials', '*.private_key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
