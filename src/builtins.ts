/**
 * The composition root: every built-in environment, backend and data materializer registers
 * itself here, once. The entry points (the CLI and the library's `index.ts`) import this file;
 * nothing below them does, so the registries do not depend on what uses them.
 */
import './envs/sim/env.ts';
import './envs/tasks/env.ts';
import './envs/triggers/env.ts';
import './envs/searchqa/env.ts';
import './envs/livemath/env.ts';
import './envs/docvqa/env.ts';
import './envs/officeqa/env.ts';
import './envs/spreadsheetbench/env.ts';
import './envs/alfworld/env.ts';

import './model/sim/backend.ts';
import './model/providers/openai.ts';
import './model/providers/anthropic.ts';
import './model/providers/openai-compatible.ts';
import './model/harness/backends.ts';

import './envs/searchqa/materialize.ts';
import './envs/livemath/materialize.ts';
import './envs/docvqa/materialize.ts';
import './envs/officeqa/materialize.ts';
import './envs/spreadsheetbench/materialize.ts';
