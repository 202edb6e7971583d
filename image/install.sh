#!/bin/sh
# Install a built hotline checkout into a prefix: <prefix>/lib/hotline holds dist/, the Nix
# templates prepare renders and the production node_modules, <prefix>/bin/hotline starts it with a fixed Node binary.
# The image's Dockerfile and image/image.test.ts both install through this script, so the test
# exercises the path the image really takes.
#
#   image/install.sh --prefix DIR [--source DIR] [--node PATH]
#
# --source  the repository root, already built (`npm ci && npm run build`); default: this script's ..
# --node    the Node binary the launcher runs; default: `node` found on PATH now, resolved to a path
#
# The new tree is assembled beside the old one and renamed into place, so a failed install leaves
# the previous one working.
set -eu

die() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}

prefix=""
source_dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
node_bin=""

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --source) [ $# -ge 2 ] || die "--source needs a directory"; source_dir=$2; shift 2 ;;
    --node) [ $# -ge 2 ] || die "--node needs a path"; node_bin=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[ -n "$prefix" ] || die "--prefix is required, e.g. --prefix /opt/hotline"
case "$prefix" in
  /*) ;;
  *) prefix="$(pwd)/$prefix" ;;
esac

# Both paths are written into the launcher inside double quotes.
case "$prefix" in
  *[\"\$\`\\]*) die "--prefix must not contain quotes, \$, \` or backslashes: '$prefix'" ;;
esac

if [ -z "$node_bin" ]; then
  node_bin=$(command -v node) || die "node is not on PATH; pass --node /path/to/node"
fi
case "$node_bin" in
  /*) ;;
  *) die "--node must be an absolute path, got '$node_bin'" ;;
esac
[ -x "$node_bin" ] || die "--node '$node_bin' is not executable"
case "$node_bin" in
  *[\"\$\`\\]*) die "--node must not contain quotes, \$, \` or backslashes: '$node_bin'" ;;
esac

for built in dist/daemon/main.js dist/cli/main.js nix-templates package.json package-lock.json node_modules; do
  [ -e "$source_dir/$built" ] ||
    die "$source_dir/$built is missing: build the checkout first (npm ci && npm run build)"
done

npm_bin=$(command -v npm) || die "npm is not on PATH (it prunes the dev dependencies)"

mkdir -p "$prefix/lib" "$prefix/bin"
target="$prefix/lib/hotline"
stage="$prefix/lib/.hotline.new.$$"
old="$prefix/lib/.hotline.old.$$"
trap 'rm -rf "$stage" "$old"' EXIT INT TERM

mkdir "$stage"
# nix-templates/: the daemon finds it above dist/ at run time (prepare's packages flake).
cp -RH "$source_dir/dist" "$source_dir/nix-templates" "$source_dir/package.json" "$source_dir/package-lock.json" "$stage/"
# node_modules is copied, then pruned in place: no network and no rebuild of native addons,
# so the copy keeps the binaries built for this very Node.
cp -RH "$source_dir/node_modules" "$stage/node_modules"
(cd "$stage" && "$npm_bin" prune --omit=dev --offline --no-audit --no-fund --ignore-scripts >/dev/null) ||
  die "npm prune --omit=dev failed in $stage"
# Tests are not part of an installed daemon; neither are native prebuilds for other platforms
# (node-pty ships darwin and win32 ones) nor the scope folders prune leaves empty.
find "$stage/dist" -name '*.test.js' -exec rm -f {} +
platform=$("$node_bin" -p process.platform)
find "$stage/node_modules" -type d -path '*/prebuilds/*' -prune ! -name "$platform-*" -exec rm -rf {} +
find "$stage/node_modules" -mindepth 1 -type d -empty -delete

launcher="$prefix/bin/.hotline.new.$$"
cat >"$launcher" <<EOF
#!/bin/sh
# hotline launcher written by image/install.sh; runs the daemon's CLI with the Node it was built for.
exec "$node_bin" --max-semi-space-size=1 --v8-pool-size=1 "$target/dist/cli/main.js" "\$@"
EOF
chmod 0755 "$launcher"

chmod -R a+rX "$stage"

if [ -e "$target" ]; then mv "$target" "$old"; fi
if ! mv "$stage" "$target"; then
  if [ -e "$old" ]; then mv "$old" "$target"; fi
  die "could not move the new tree into $target; the previous install is kept"
fi
mv "$launcher" "$prefix/bin/hotline"
printf 'installed hotline into %s (node: %s)\n' "$prefix" "$node_bin"
