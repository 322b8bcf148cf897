#!/usr/bin/env bash
# Third-party MCP servers the MCP plugin's tests run against (idempotent).
#
# - PyPI servers go into the active Python environment (CI's venv, or your .venv):
#   mcp-server-time, mcp-server-git.
# - npm servers go into .test-servers/ (git-ignored) with `npm install --prefix`:
#   @modelcontextprotocol/server-everything, @modelcontextprotocol/server-filesystem.
# The tests find them there and FAIL (they do not skip) when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python}"
if [ -x .venv/bin/python ] && [ -z "${VIRTUAL_ENV:-}" ] && [ -z "${CI:-}" ]; then
  PYTHON=.venv/bin/python
fi

# "mcp>=2": never let a server's requirements move OryxOS's SDK back to 1.x.
"$PYTHON" -m pip install --quiet mcp-server-time mcp-server-git "mcp>=2"

PREFIX=.test-servers
need_npm=0
for pkg in server-everything server-filesystem; do
  [ -e "$PREFIX/node_modules/@modelcontextprotocol/$pkg/package.json" ] || need_npm=1
done
if [ "$need_npm" = 1 ]; then
  mkdir -p "$PREFIX"
  npm install --prefix "$PREFIX" --no-audit --no-fund --silent \
    @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem
fi
echo "MCP test servers ready: $("$PYTHON" -m pip show mcp-server-time mcp-server-git 2>/dev/null | grep -c '^Name') PyPI, $(ls "$PREFIX/node_modules/@modelcontextprotocol" | wc -l) npm"
