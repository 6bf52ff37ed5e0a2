/** The built-in environments, registered on import. */
import './sim/env.ts';
import './tasks/env.ts';
import './searchqa/env.ts';
import './livemath/env.ts';
import './docvqa/env.ts';
import './officeqa/env.ts';
import './spreadsheetbench/env.ts';
import './alfworld/env.ts';
