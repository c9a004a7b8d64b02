#!/bin/sh
# Installs, once, what building and testing the VS Code extension needs, in a
# cache outside the repository ($AGENTLS_E2E_CACHE, default ~/.cache/agentls-e2e). Every step
# leaves a stamp: a second run costs nothing. Only the npm registry and Debian
# apt are used (never `npx playwright install`: it downloads a browser).
#
#   toolchain.sh node   Node 24 (from the npm package `node`)
#   toolchain.sh e2e    Node 24, Chromium + code-server's build deps (apt),
#                       code-server, and playwright-core for the e2e harness
#
# Print the Node 24 bin directory with: toolchain.sh node-bin
set -eu

CACHE=${AGENTLS_E2E_CACHE:-$HOME/.cache/agentls-e2e}
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
APT_PACKAGES="chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev"

NODE_DIR=$CACHE/node24
NODE_BIN=$NODE_DIR/node_modules/node/bin
NPM_FLAGS="--no-audit --no-fund --loglevel=error"

say() { printf 'toolchain: %s\n' "$*" >&2; }

install_node() {
  stamp=$NODE_DIR/.installed-$NODE_VERSION
  [ -f "$stamp" ] && [ -x "$NODE_BIN/node" ] && return 0
  say "installing Node $NODE_VERSION into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  [ -f "$NODE_DIR/package.json" ] || echo '{"private": true}' > "$NODE_DIR/package.json"
  (cd "$NODE_DIR" && npm install $NPM_FLAGS "node@$NODE_VERSION")
  "$NODE_BIN/node" --version | grep -q "^v$NODE_VERSION$"
  touch "$stamp"
}

install_apt() {
  # shellcheck disable=SC2086
  if dpkg -s $APT_PACKAGES >/dev/null 2>&1; then
    return 0
  fi
  say "installing $APT_PACKAGES (apt)"
  SUDO=
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $APT_PACKAGES >/dev/null
}

install_code_server() {
  dir=$CACHE/code-server
  stamp=$dir/.installed-$CODE_SERVER_VERSION
  [ -f "$stamp" ] && return 0
  say "installing code-server $CODE_SERVER_VERSION into $dir (a few minutes, once)"
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  (cd "$dir" && PATH="$NODE_BIN:$PATH" npm install $NPM_FLAGS "code-server@$CODE_SERVER_VERSION")
  package=$dir/node_modules/code-server
  # Newer npm may skip install scripts; run them ourselves when they did not run.
  if [ ! -d "$package/lib/vscode/node_modules" ]; then
    say "running code-server's postinstall"
    (cd "$package" && PATH="$NODE_BIN:$PATH" \
      npm_config_user_agent="npm/$(npm -v) node/$("$NODE_BIN/node" -v) linux x64" sh ./postinstall.sh)
  fi
  if ! (cd "$dir" && PATH="$NODE_BIN:$PATH" node -e "require('argon2')" >/dev/null 2>&1); then
    say "building argon2"
    (cd "$dir/node_modules/argon2" && PATH="$NODE_BIN:$PATH" npx --yes cross-env ZERO_AR_DATE=1 node-gyp-build)
  fi
  PATH="$NODE_BIN:$PATH" "$dir/node_modules/.bin/code-server" --version >/dev/null
  touch "$stamp"
}

install_harness() {
  dir=$CACHE/harness
  stamp=$dir/.installed-$PLAYWRIGHT_VERSION
  [ -f "$stamp" ] && return 0
  say "installing playwright-core $PLAYWRIGHT_VERSION into $dir"
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  (cd "$dir" && PATH="$NODE_BIN:$PATH" npm install $NPM_FLAGS "playwright-core@$PLAYWRIGHT_VERSION")
  touch "$stamp"
}

case "${1:-}" in
  node)
    install_node
    ;;
  node-bin)
    echo "$NODE_BIN"
    ;;
  e2e)
    install_node
    install_apt
    install_code_server
    install_harness
    ;;
  *)
    echo "usage: $0 node|node-bin|e2e" >&2
    exit 2
    ;;
esac
