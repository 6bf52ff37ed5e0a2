#!/usr/bin/env bash
# The Debian packages the test suite needs beside Node.js, installed when missing (as root, or
# with sudo): Chromium for the dashboard's browser tests, redis-server for the rollout workers,
# Python's openpyxl and pandas for SpreadsheetBench's scoring scripts. Training and the CLI need
# none of them.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
python3 -c 'import openpyxl, pandas' >/dev/null 2>&1 || /usr/bin/python3 -c 'import openpyxl, pandas' >/dev/null 2>&1 ||
  missing+=(python3 python3-openpyxl python3-pandas)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends "${missing[@]}"
