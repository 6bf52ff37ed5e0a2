/**
 * What a config key reaches beyond the run's own settings, for those who set keys on behalf of
 * someone else (the MCP `train` tool for an agent, a trainer for its workers):
 *
 * - `setting`: a number, a switch, a model name, a limit; it reads no file and sends nothing
 *   anywhere new;
 * - `path`: a file or folder the run reads or writes (data, the seed skill, the output root,
 *   the cache);
 * - `endpoint`: where requests go and which key goes with them (a role's backend, `base_url`,
 *   `api_key_env`; the transfer targets; the queue).
 *
 * Every other key (a backend's or an environment's options given as text or lists, such as a
 * CLI's binary, a Python interpreter, a world file or a scorer module; the original's backend
 * keys) is none of these: it may name a program or code, so it is `undefined` and only a config
 * file may set it. Keys are the structured paths (`model.target.base_url`); `overridePath` maps
 * a key as written.
 */
import type { Cast } from './cast.ts';
import { ENV_CORE_KEYS } from './schema.ts';

export type KeyKind = 'setting' | 'path' | 'endpoint';

const ROLES = ['target', 'optimizer', 'judge'];
const ROLE_ENDPOINT = ['backend', 'base_url', 'api_key_env'];
const ROLE_SETTING = [
  'model',
  'pool',
  'concurrency',
  'rpm',
  'tpm',
  'max_retries',
  'timeout_s',
  'max_reply_bytes',
  'backoff_s',
  'backoff_max_s',
  'max_wait_s',
  'temperature',
  'reasoning_effort',
  'max_output_tokens',
  'json_schema',
  'prompt_cache',
  'batch',
  'batch_baseline',
  'batch_poll_s',
];
const MODEL_SETTING = [
  'reasoning_effort',
  'rewrite_reasoning_effort',
  'rewrite_max_completion_tokens',
  'optimizer_max_completion_tokens',
  'trace_to_optimizer',
];
const ENV_PATH = ['skill_init', 'out_root', 'split_dir', 'data_path', 'split_output_dir'];
/** Environments' own keys that name data (the bring-your-own split files, a benchmark's data folders). */
const ENV_DATA = ['train_file', 'val_file', 'test_file', 'data_root', 'data_dirs'];

const plain = (value: unknown) => typeof value === 'number' || typeof value === 'boolean';

export function keyKind(key: string, value: Cast | unknown): KeyKind | undefined {
  const [section, sub, ...rest] = key.split('.');
  const field = rest.join('.');
  switch (section) {
    case 'train':
    case 'gradient':
    case 'optimizer':
    case 'budget':
      return sub ? 'setting' : undefined;
    case 'evaluation':
      if (sub === 'transfer_targets') return 'endpoint';
      return sub ? 'setting' : undefined;
    case 'cache':
      return sub === 'mode' ? 'setting' : sub === 'path' ? 'path' : undefined;
    case 'run':
      return sub === 'queue' ? 'endpoint' : undefined;
    case 'model':
      if (sub === 'backend') return 'endpoint';
      if (sub && MODEL_SETTING.includes(sub) && !field) return 'setting';
      if (!sub || !ROLES.includes(sub)) return undefined;
      if (ROLE_ENDPOINT.includes(field)) return 'endpoint';
      if (ROLE_SETTING.includes(field)) return 'setting';
      if (/^(price|capabilities)\.\w+$/.test(field)) return 'setting';
      // A backend's own option (a latency, a switch) is a setting; text may name a program or a variable to pass on.
      if (/^options\.\w+$/.test(field)) return plain(value) ? 'setting' : undefined;
      return undefined;
    case 'env': {
      if (!sub) return undefined;
      if (ENV_PATH.includes(sub) && !field) return 'path';
      if (ENV_CORE_KEYS.includes(sub)) return field ? undefined : 'setting';
      if (ENV_DATA.includes(sub) && !field) return 'path';
      // An environment's own option: a number or a switch is a setting; text may name a program.
      return plain(value) ? 'setting' : undefined;
    }
    default:
      return undefined;
  }
}
