#!/usr/bin/env bash
# Headless Chromium for the web console's browser test (tests/plugins/web/test_browser.py).
# Debian's chromium package; Playwright for Python drives it (no 'playwright install').
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || true)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium chromium-driver
