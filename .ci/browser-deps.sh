#!/usr/bin/env bash
# The browser tests drive Debian's own Chromium through playwright-core, the many-instances tests put Debian's
# nginx in front of the server, and the bulk-download tests read the SQLite database with Debian's sqlite3 command;
# none is ever downloaded by npm.
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
if [ "${#missing[@]}" -eq 0 ]; then
  echo "chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'); nginx and sqlite3 present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y "${missing[@]}"
/usr/bin/chromium --version
