// Validates the OpenAPI document read from standard input against the official OpenAPI schema of
// its version, and prints {valid, version, errors}. A separate Node process: the validator is an
// ES module only, which jest's CommonJS runtime cannot load.
import { Validator } from '@seriousme/openapi-schema-validator';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(text));
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? [] }));
