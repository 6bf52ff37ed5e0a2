/** The built-in environments, registered on import. */
import './sim/env.ts';
import './tasks/env.ts';
