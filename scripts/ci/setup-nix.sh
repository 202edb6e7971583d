#!/usr/bin/env bash
# Install Debian's nix-bin (when nix is missing) and configure single-user, offline use for the
# current user (root: system-wide in /etc/nix): no sandbox, no substituters, no build users, an empty flake registry.
# It deliberately does not enable the experimental features (nix-command, flakes): the daemon passes
# them on every Nix call, and the test suite proves it here.
# Idempotent: safe to run on every CI start.
set -euo pipefail

log() { printf 'setup-nix: %s\n' "$*" >&2; }

install_nix() {
  if command -v nix >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    log "nix is missing and this user cannot install packages; run as root or install nix-bin"
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends nix-bin; then
    apt-get update
    apt-get install -y --no-install-recommends nix-bin
  fi
}

# The store must belong to the user who builds (single-user mode, no daemon).
prepare_store() {
  local me
  me="$(id -un)"
  if [ "$(id -u)" -eq 0 ]; then
    mkdir -p /nix/store /nix/var/nix/gcroots/auto /nix/var/nix/profiles/per-user/"$me" /nix/var/log/nix
  elif [ ! -w /nix/store ]; then
    log "/nix/store is not writable by $me; single-user mode needs: sudo chown -R $me /nix"
    exit 1
  fi
}

# Root writes the system config (/etc/nix), so it applies whatever HOME a test daemon sets;
# another user writes its own ~/.config/nix.
write_config() {
  local conf_dir="${XDG_CONFIG_HOME:-$HOME/.config}/nix"
  if [ "$(id -u)" -eq 0 ]; then
    conf_dir=/etc/nix
  fi
  local registry="$conf_dir/empty-registry.json"
  local conf="$conf_dir/nix.conf"
  local tmp
  mkdir -p "$conf_dir"
  printf '{"flakes":[],"version":2}\n' >"$registry"
  tmp="$(mktemp "$conf.XXXXXX")"
  cat >"$tmp" <<CONF
# Written by scripts/ci/setup-nix.sh: single-user, offline Nix for hotline.
sandbox = false
build-users-group =
substituters =
trusted-substituters =
flake-registry = $registry
warn-dirty = false
connect-timeout = 2
fallback = false
CONF
  if [ -f "$conf" ] && cmp -s "$tmp" "$conf"; then
    rm -f "$tmp"
  else
    mv "$tmp" "$conf"
    log "wrote $conf"
  fi
}

check_nix() {
  local out
  out="$(nix --version)"
  # A trivial evaluation proves the config parses (with the features the daemon passes itself).
  nix --extra-experimental-features 'nix-command flakes' eval --raw --expr '"ok"' >/dev/null
  log "ready: $out"
}

install_nix
prepare_store
write_config
check_nix
