"""Reads workbooks for the SpreadsheetBench env (trusted code; it never runs a generated script).

    python sheets.py preview PATH      a text preview of every sheet, for the target's prompt
    python sheets.py evaluate          JSON in on stdin, JSON out: each test case compared

The comparison follows SpreadsheetBench's official evaluation: both workbooks are read with their
cached values (a formula cell shows the value Excel last saved, or nothing); each cell of the
answer ranges is compared after numbers and numeric text are rounded to 2 decimals, times become
their "HH:MM" text, date-times become Excel serial days rounded to the day, and an empty string
counts as an empty cell; otherwise the types must match and the values be equal. Styles are not
compared.

evaluate's input: {"answer_position": "'Sheet1'!D2:D20,E5", "cases": [{"no": "1", "pred": PATH,
"gold": PATH}]}. Its output: {"cases": [{"no", "ok", "reason", "cells": [{"ref", "got",
"expected", "ok"}], "empty_ok", "unlisted_ok", "unlisted_wrong", "formulas"}]}: the cells listed
are the wrong ones and some of the right ones that are not empty, the rest are counted, and
"formulas" names answer cells of the output that hold a formula with no cached value.
"""
import datetime
import json
import os
import re
import sys

# openpyxl imports numpy when it can, only to write numpy numbers; reading needs none of it, and
# leaving it out makes each run of this helper start in half the time.
sys.modules.setdefault("numpy", None)  # type: ignore[arg-type]

import openpyxl  # noqa: E402

PREVIEW_ROWS = 5
PREVIEW_COLS = 20
PREVIEW_CHARS = 40
LIST_WRONG = 100
LIST_RIGHT = 40
LIST_FORMULAS = 10
EXCEL_EPOCH = datetime.datetime(1899, 12, 30)
CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")


def clip(text, limit):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def preview(path):
    wb = openpyxl.load_workbook(path, data_only=False)
    lines = []
    try:
        for ws in wb.worksheets:
            lines.append(f'## Sheet "{ws.title}": {ws.dimensions}, {ws.max_row} rows x {ws.max_column} columns')
            for row in ws.iter_rows(min_row=1, max_row=min(ws.max_row, PREVIEW_ROWS), max_col=min(ws.max_column, PREVIEW_COLS)):
                cells = []
                for cell in row:
                    text = "" if cell.value is None else str(cell.value).replace("\r", "").replace("\n", "\\n")
                    cells.append(f"{cell.coordinate}={clip(text, PREVIEW_CHARS)}")
                lines.append(" | ".join(cells))
            if ws.max_row > PREVIEW_ROWS:
                lines.append(f"... ({ws.max_row - PREVIEW_ROWS} more rows)")
            if ws.max_column > PREVIEW_COLS:
                lines.append(f"... ({ws.max_column - PREVIEW_COLS} more columns)")
            lines.append("")
    finally:
        wb.close()
    return "\n".join(lines).rstrip() + "\n"


def comparable(value):
    """A cell value as the official evaluation compares it."""
    if isinstance(value, (int, float)):  # booleans too: True reads as 1.0
        return round(float(value), 2)
    if isinstance(value, datetime.time):
        return str(value)[:-3]
    if isinstance(value, datetime.datetime):
        delta = value - EXCEL_EPOCH
        return round(delta.days + delta.seconds / 86400.0, 0)
    if isinstance(value, str):
        try:
            return round(float(value), 2)
        except ValueError:
            return value
    return value


def same_value(expected, got):
    a, b = comparable(expected), comparable(got)
    if a in ("", None) and b in ("", None):
        return True
    if type(a) is not type(b):
        return False
    return a == b


def column_number(letters):
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - ord("A") + 1
    return n


def column_letters(n):
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def cell_names(cell_range):
    """Every cell of 'A1' or 'A1:C3', column by column as the official evaluation walks them."""
    ends = [end.strip() for end in cell_range.split(":")]
    found = [CELL.match(end) for end in ends]
    if len(ends) > 2 or not all(found):
        raise ValueError(f"'{cell_range}' is not a cell or a range of cells")
    (c1, r1), (c2, r2) = [(column_number(m.group(1)), int(m.group(2))) for m in (found[0], found[-1])]
    return [f"{column_letters(c)}{r}" for c in range(min(c1, c2), max(c1, c2) + 1) for r in range(min(r1, r2), max(r1, r2) + 1)]


def position_parts(answer_position):
    """The comma-separated parts of an answer position; a comma inside a quoted sheet name is the name's."""
    parts, current, quoted = [], "", False
    for ch in answer_position:
        if ch == "'":
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def answer_ranges(answer_position, first_sheet):
    """(sheet, range) pairs of an answer position; a part without a sheet is on the first sheet."""
    out = []
    for part in position_parts(answer_position):
        part = part.strip()
        if not part:
            continue
        if "!" in part:
            sheet, cell_range = part.rsplit("!", 1)
            sheet = sheet.strip().strip("'\"")
        else:
            sheet, cell_range = first_sheet, part
        out.append((sheet, cell_range.strip().strip("'\"")))
    return out


def show(value):
    if value is None:
        return "(empty)"
    if isinstance(value, str):
        return json.dumps(clip(value, 200), ensure_ascii=False)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return repr(value)


def compare_case(answer_position, pred, gold):
    result = {"ok": False, "reason": "", "cells": [], "empty_ok": 0, "unlisted_ok": 0, "unlisted_wrong": 0, "formulas": []}
    if not os.path.exists(pred):
        result["reason"] = "the output workbook was not written"
        return result
    try:
        gold_wb = openpyxl.load_workbook(gold, data_only=True)
    except Exception as e:  # noqa: BLE001
        result["reason"] = f"cannot open the golden workbook: {e}"
        return result
    try:
        pred_wb = openpyxl.load_workbook(pred, data_only=True)
    except Exception as e:  # noqa: BLE001
        gold_wb.close()
        result["reason"] = f"cannot open the output workbook: {e}"
        return result
    wrong_refs = []
    listed_right = 0
    ok = True
    try:
        ranges = answer_ranges(answer_position, gold_wb.sheetnames[0])
        if not ranges:
            raise ValueError("it names no cell")
        for sheet, cell_range in ranges:
            names = cell_names(cell_range)
            if sheet not in pred_wb.sheetnames:
                ok = False
                result["reason"] = result["reason"] or f"worksheet '{sheet}' is not in the output"
                continue
            if sheet not in gold_wb.sheetnames:
                ok = False
                result["reason"] = result["reason"] or f"worksheet '{sheet}' is not in the golden workbook"
                continue
            gws, pws = gold_wb[sheet], pred_wb[sheet]
            for name in names:
                expected, got = gws[name].value, pws[name].value
                right = same_value(expected, got)
                ref = f"{sheet}!{name}"
                if not right:
                    ok = False
                    result["reason"] = result["reason"] or f"{ref}: got {show(got)}, expected {show(expected)}"
                    wrong_refs.append((sheet, name))
                    if len(result["cells"]) - listed_right < LIST_WRONG:
                        result["cells"].append({"ref": ref, "got": show(got), "expected": show(expected), "ok": False})
                    else:
                        result["unlisted_wrong"] += 1
                elif expected in (None, "") and got in (None, ""):
                    result["empty_ok"] += 1
                elif listed_right < LIST_RIGHT:
                    listed_right += 1
                    result["cells"].append({"ref": ref, "got": show(got), "expected": show(expected), "ok": True})
                else:
                    result["unlisted_ok"] += 1
    except ValueError as e:
        ok = False
        result["reason"] = f"answer_position '{answer_position}' cannot be read: {e}"
    except Exception as e:  # noqa: BLE001  (a chart sheet named as the answer's sheet, a damaged cell)
        ok = False
        result["reason"] = f"the cells could not be compared: {type(e).__name__}: {e}"
    finally:
        gold_wb.close()
        pred_wb.close()
    result["ok"] = ok
    if wrong_refs:
        result["formulas"] = uncached_formulas(pred, wrong_refs)
    return result


def uncached_formulas(pred, refs):
    """Wrong answer cells of the output that hold a formula and no cached value."""
    found = []
    try:
        formulas = openpyxl.load_workbook(pred, data_only=False)
    except Exception:  # noqa: BLE001
        return found
    try:
        for sheet, name in refs:
            value = formulas[sheet][name].value
            if isinstance(value, str) and value.startswith("="):
                found.append(f"{sheet}!{name} {clip(value, 80)}")
                if len(found) >= LIST_FORMULAS:
                    break
    finally:
        formulas.close()
    return found


def evaluate(request):
    cases = []
    for case in request["cases"]:
        outcome = compare_case(request["answer_position"], case["pred"], case["gold"])
        outcome["no"] = case["no"]
        cases.append(outcome)
    return {"cases": cases}


def main(argv):
    if len(argv) == 2 and argv[0] == "preview":
        sys.stdout.write(preview(argv[1]))
        return 0
    if len(argv) == 1 and argv[0] == "evaluate":
        json.dump(evaluate(json.load(sys.stdin)), sys.stdout, ensure_ascii=False)
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
