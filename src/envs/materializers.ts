/** The benchmarks `skillopt data materialize` knows, registered on import. */
import './searchqa/materialize.ts';
import './livemath/materialize.ts';
import './docvqa/materialize.ts';
import './officeqa/materialize.ts';
import './spreadsheetbench/materialize.ts';
