#!/usr/bin/env bash
# The console's browser test needs Debian's Chromium and its driver (and a CJK font, so that
# the screenshots show Chinese): installed here when missing. Run by .ci/run before `make test`.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
fc-list 2>/dev/null | grep -qi "wenquanyi\|noto sans cjk" || missing+=(fonts-wqy-zenhei)
if [ ${#missing[@]} -eq 0 ]; then
    echo "ci_browser: chromium and chromedriver present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ci_browser: missing ${missing[*]} and not root; the browser test will be skipped" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
chromium --version
/usr/bin/chromedriver --version
