"""Writes .xlsx workbooks for the tests with openpyxl, as the benchmarks' own files are written.

stdin: {"<path>": {"<sheet>": {"A1": value, ...}, ...}, ...}; sheets in the order given. A value
is written as it is (numbers, text, true/false, null; text starting with "=" is a formula, saved
without a cached value, as openpyxl saves formulas), or typed: {"date": "2024-03-01T00:00:00"},
{"time": "12:30:00"}.
"""
import datetime
import json
import os
import sys

import openpyxl


def value(v):
    if isinstance(v, dict) and "date" in v:
        return datetime.datetime.fromisoformat(v["date"])
    if isinstance(v, dict) and "time" in v:
        return datetime.time.fromisoformat(v["time"])
    return v


def main():
    spec = json.load(sys.stdin)
    for path, sheets in spec.items():
        wb = openpyxl.Workbook()
        wb.remove(wb.active)
        for name, cells in sheets.items():
            ws = wb.create_sheet(name)
            for ref, v in cells.items():
                ws[ref] = value(v)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        wb.save(path)


if __name__ == "__main__":
    main()
