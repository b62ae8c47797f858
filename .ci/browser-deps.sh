#!/usr/bin/env bash
# The browser tests drive Debian's own Chromium through playwright-core, the many-instances tests put Debian's
# nginx in front of the server, and the bulk-download tests read the SQLite database with Debian's sqlite3 command;
# none is ever downloaded by npm. The static-hosting tests also serve a build with Caddy as docs/deploy.md
# configures it, when Caddy can be installed (they say so when it cannot).
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! [ -x /usr/bin/caddy ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y caddy || echo "caddy could not be installed: the Caddy static-hosting checks will be skipped"
fi
# docs/deploy.md's rclone configuration is run as written by test/build/rclone.test.ts, skipped (saying so) without it.
if ! command -v rclone >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y rclone || echo "rclone could not be installed: the rclone upload checks will be skipped"
fi

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
if [ "${#missing[@]}" -eq 0 ]; then
  echo "chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'); nginx and sqlite3 present"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y "${missing[@]}"
/usr/bin/chromium --version
