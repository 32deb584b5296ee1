import type { FlagSpec } from '../../args';

export const HARNESS_FLAG: FlagSpec = {
  harness: { type: 'string', description: 'harness repository (default: the current folder)' },
};

export const JSON_FLAG: FlagSpec = {
  json: { type: 'boolean', description: 'print JSON' },
};
