import type { OptimizerContext } from '../../src/engine/ask.ts';
import type { UpdateMode } from '../../src/engine/protocol.ts';
import type { ChatModel } from '../../src/model/types.ts';

export function optimizerContext(optimizer: ChatModel, mode: UpdateMode = 'patch'): OptimizerContext & { warnings: string[] } {
  const warnings: string[] = [];
  return { optimizer, mode, env: 'test', maxTokens: 1000, warn: (m) => warnings.push(m), warnings };
}
