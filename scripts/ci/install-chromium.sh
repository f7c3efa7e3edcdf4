#!/usr/bin/env bash
# CI: the console's browser tests drive Debian's chromium (playwright-core never downloads one).
# Installs it when missing; a no-op where it is already there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y chromium
