/** The `env.*` keys of the `tasks` env (bring your own data). */
import { z } from 'zod';
import { ExtractSchema } from '../scoring/extract.ts';
import { ScorerSchema } from '../scoring/scorer.ts';

export const FieldsSchema = z
  .object({
    /** Field holding the task input; available to the prompt as {{input}}. */
    input: z.string().min(1).default('input'),
    /** Field (or fields) holding the expected answer(s); several golds may be a list. */
    answer: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).default('answer'),
    /** Field holding a unique id; records without one get `<file name>:<position>`. */
    id: z.string().min(1).default('id'),
    /** Field holding a task type, for per-type breakdowns ('' = none). */
    type: z.string().default(''),
    /** Field holding extra context (a passage, a document); available as {{context}} ('' = none). */
    context: z.string().default(''),
    /** Field holding image paths or URLs sent with the task ('' = none). */
    images: z.string().default(''),
  })
  .strict();

export const PromptSchema = z
  .object({
    /** The user message, with {{field}} placeholders; '' = {{input}} (after {{context}} when mapped). */
    user: z.string().default(''),
    /** Text after the skill in the system prompt; unset = how to give the answer, for the extract rule. */
    instructions: z.string().optional(),
  })
  .strict();

export const TasksOptionsSchema = z.object({
  /** Separate files per split (all three), instead of data_path or split_dir. */
  train_file: z.string().default(''),
  /** The val split's file (with `train_file` and `test_file`). */
  val_file: z.string().default(''),
  /** The test split's file (with `train_file` and `val_file`). */
  test_file: z.string().default(''),
  fields: FieldsSchema.prefault({}),
  prompt: PromptSchema.prefault({}),
  extract: ExtractSchema.prefault({}),
  /** How an answer is scored: `type` (`exact_match`, `token_f1`, `contains`, `regex`, `numeric`, `choice`, `anls`, `json_field`, `judge`, `custom`) and its options (own-tasks.md, Scorers). */
  scorer: ScorerSchema.prefault({ type: 'exact_match' }),
  /** Turns at most; a later turn only asks again when the reply had no answer in the required form. */
  max_turns: z.number().int().positive().default(1),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
  /** What the optimizer should know about these tasks, added to the generic guidance. */
  analyst_guide: z.string().default(''),
});
export type TasksOptions = z.infer<typeof TasksOptionsSchema>;
