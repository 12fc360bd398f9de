// Reading a run directory's result.json for the commands that take run directories as input (diff,
// replay): bounded in size, parsed, and checked against docs/schemas/result.schema.json before any
// field is used, so a truncated, empty or edited file is refused in one line (exit 2), never a
// TypeError deep in a command.
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { PtError } from '../../driver/base/errors.js';
import type { ResultJson } from './result.js';
import { loadSchemaFile } from '../files/schema-file.js';
import { readRunFile } from './read-run-file.js';
import { RUN_FILES } from './run-files.js';


let validate: ValidateFunction | undefined;

/** A directory given as a run directory holds no result.json. */
export class NotARunDirError extends PtError {
  override readonly name = 'NotARunDirError';
  constructor(readonly dir: string, options?: ErrorOptions) {
    super('bad_config', `not a run directory (no ${RUN_FILES.result}): ${dir}`, options);
  }
}

/** The result.json of run directory `dir`, checked against its schema; PtError('bad_config') naming the file and the first problem. */
export async function readResultJson(dir: string): Promise<ResultJson> {
  const path = join(dir, RUN_FILES.result);
  const text = (await readRunFile(dir, RUN_FILES.result).catch((e: NodeJS.ErrnoException) => {
    throw e.code === 'ENOENT' ? new NotARunDirError(dir, { cause: e }) : e;
  })).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new PtError('bad_config', `${path} is not a ptlab result.json: ${text.trim() === '' ? 'it is empty' : `not JSON (${(e as Error).message})`}`, { cause: e });
  }
  validate ??= new Ajv({ allErrors: false, strict: false }).compile(loadSchemaFile('result.schema.json'));
  if (!validate(value)) {
    const e = validate.errors?.[0];
    const where = e?.instancePath ? `${e.instancePath.slice(1).replaceAll('/', '.')} ` : '';
    throw new PtError('bad_config', `${path} is not a ptlab result.json: ${where}${e?.message ?? 'does not match docs/schemas/result.schema.json'}`);
  }
  return value as ResultJson;
}
