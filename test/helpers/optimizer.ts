import type { OptimizerContext } from '../../src/engine/optimizer-model/ask.ts';
import type { UpdateMode } from '../../src/protocol/optimizer.ts';
import type { ChatModel } from '../../src/model/types.ts';

export function optimizerContext(
  optimizer: ChatModel,
  mode: UpdateMode = 'patch',
): OptimizerContext & { warnings: string[] } {
  const warnings: string[] = [];
  return { optimizer, mode, env: 'test', maxTokens: 1000, warn: (m) => warnings.push(m), warnings };
}
