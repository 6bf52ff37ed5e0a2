/** The built-in backends, registered on import. */
import './sim/backend.ts';
import './providers/openai.ts';
import './providers/anthropic.ts';
import './providers/openai-compatible.ts';
import './not-built.ts';
