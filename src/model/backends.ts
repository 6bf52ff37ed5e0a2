/** The built-in backends, registered on import. */
import './sim/backend.ts';
