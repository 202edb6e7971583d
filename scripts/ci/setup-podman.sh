#!/usr/bin/env bash
# CI: make Debian's podman work on these machines, for image/boot.test.ts. Run as root.
# - runc, not crun: crun fails on the hybrid cgroup hierarchy here; cgroupfs: there is no systemd.
# - default_ulimits = []: podman's default raises the open-files limit, which is not permitted here.
# - the file events logger: there is no journald.
# Idempotent: rewrites /etc/containers/containers.conf only when it differs.
set -euo pipefail

conf=/etc/containers/containers.conf
want='# Written by scripts/ci/setup-podman.sh (hotline CI).
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"'

mkdir -p /etc/containers
if [ "$(cat "$conf" 2>/dev/null || true)" != "$want" ]; then
  printf '%s\n' "$want" >"$conf.new"
  mv "$conf.new" "$conf"
  printf 'setup-podman: wrote %s\n' "$conf" >&2
fi
podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}}' >&2
