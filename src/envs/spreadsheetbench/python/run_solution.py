"""Runs a spreadsheet solution script with INPUT_PATH and OUTPUT_PATH set.

    python run_solution.py [SCRIPT [INPUT [OUTPUT]]]
    (defaults: solution.py input.xlsx output.xlsx, relative to the working directory)

The script is run as __main__ with the two names already defined; lines of its own that set them
at the top level are ignored, so a script written for another path still reads INPUT and writes
OUTPUT. Exit codes: 0 done and OUTPUT written, 2 the script raised (its traceback is printed),
3 it finished without writing OUTPUT, anything else its own sys.exit code.

When SKILLOPT_MAX_FILE_BYTES is set, no file the script writes may grow beyond that many bytes.
"""
import os
import re
import sys
import traceback

PATH_ASSIGNMENT = re.compile(r"^(INPUT_PATH|OUTPUT_PATH)\s*=.*$", re.MULTILINE)
DEFAULTS = ["solution.py", "input.xlsx", "output.xlsx"]


def limit_file_size():
    limit = os.environ.get("SKILLOPT_MAX_FILE_BYTES")
    if not limit:
        return
    try:
        import resource

        size = int(limit)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    except (ImportError, ValueError, OSError):
        pass


def main(argv):
    script, input_path, output_path = (argv + DEFAULTS[len(argv):])[:3]
    with open(script, encoding="utf-8") as f:
        source = f.read()
    source = PATH_ASSIGNMENT.sub(lambda m: f"# ({m.group(1)} is set by the runner)", source)
    limit_file_size()
    namespace = {"__name__": "__main__", "__file__": script, "INPUT_PATH": input_path, "OUTPUT_PATH": output_path}
    try:
        exec(compile(source, script, "exec"), namespace)
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise
    except BaseException as error:
        # The traceback from the script's own frames on (this runner's frame is left out).
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        return 2
    if not os.path.exists(output_path):
        print(f"the script finished without writing {output_path}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
