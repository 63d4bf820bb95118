# tests/e2e/install_missing.sh - sourced by suites that need programs a
# fresh Debian 12 may lack. install_missing COMMAND:PACKAGE...: installs the
# packages whose command is missing, with apt-get (as root, else sudo);
# returns 1, naming them in $MISSING, when that fails.
install_missing() {
    local need sudo=
    MISSING=
    for need in "$@"; do
        command -v "${need%%:*}" >/dev/null 2>&1 || MISSING="$MISSING ${need#*:}"
    done
    [ -z "$MISSING" ] && return 0
    [ "$(id -u)" = 0 ] || sudo=sudo
    { $sudo apt-get update -qq &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $MISSING; } >/dev/null 2>&1
}
