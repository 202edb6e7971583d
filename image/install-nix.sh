#!/bin/sh
# Install Nix single-user for the calling (unprivileged) user at image build time, then move it
# out of the home: the image keeps nothing of its own in /home/agent, which is a volume.
#
#   install-nix.sh VERSION [installer|debian]    e.g. install-nix.sh 2.34.5
#
# installer (the default): Nix's versioned installer, as below. debian: Debian's nix-bin, which
# root installed with apt (/usr/bin/nix; VERSION is then not used), for builds that cannot reach
# releases.nixos.org; this only lays out the same single-user store under /nix for this user.
#
# Root must have created /nix owned by this user (the Dockerfile does). The versioned installer
# from releases.nixos.org carries the SHA-256 of its tarballs and checks them itself. Nix ends up
# in the profile /nix/var/nix/profiles/default, which the image puts on PATH; the user's own
# profile (~/.nix-profile, created on first `nix profile install`) comes before it.
set -eu

die() {
  printf 'install-nix.sh: %s\n' "$*" >&2
  exit 1
}

version=${1:-}
source=${2:-installer}
case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) die "usage: install-nix.sh VERSION (like 2.34.5) [installer|debian], got '$version'" ;;
esac
case "$source" in
  installer | debian) ;;
  *) die "the second argument is where Nix comes from: installer or debian, got '$source'" ;;
esac
[ "$(id -u)" -ne 0 ] || die "run this as the image's user, not as root (a single-user store belongs to one user)"
if [ ! -d /nix ] || [ ! -w /nix ]; then
  die "/nix must exist and be writable by $(id -un); create it as root first"
fi
[ -n "${HOME:-}" ] || die "HOME is not set"
: "${USER:=$(id -un)}"
export USER

install_with_installer() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT INT TERM

  curl --proto '=https' --tlsv1.2 -fsSL --retry 3 \
    -o "$work/install" "https://releases.nixos.org/nix/nix-$version/install"
  # Debian's CA bundle, so the installer does not add its own to the profile.
  NIX_SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    sh "$work/install" --no-daemon --no-channel-add --no-modify-profile --yes

  user_profile="$HOME/.nix-profile"
  [ -x "$user_profile/bin/nix" ] || die "the installer left no nix in $user_profile"
  # The same user environment (Nix itself, and its manifest) becomes the image's profile; profiles
  # under /nix/var/nix/profiles are garbage-collector roots of their own.
  environment=$(readlink -f "$user_profile") || die "cannot resolve $user_profile"
  "$user_profile/bin/nix-env" --profile /nix/var/nix/profiles/default --set "$environment"

  # Forget the per-user profile and everything else the installer wrote into the home.
  rm -rf "$user_profile" "$HOME/.nix-defexpr" "$HOME/.nix-channels" \
    "$HOME/.local/state/nix" "$HOME/.local/share/nix" "$HOME/.cache/nix"
  for dir in "$HOME/.local/state" "$HOME/.local/share" "$HOME/.local" "$HOME/.cache"; do
    rmdir "$dir" 2>/dev/null || true
  done
}

install_from_debian() {
  [ -x /usr/bin/nix ] || die "Debian's nix-bin is not installed (/usr/bin/nix is missing)"
  # The same layout the installer makes, owned by this user: the store and its state (the
  # database is created on first use), the profiles and the garbage collector's roots.
  mkdir -p /nix/store /nix/var/nix/db /nix/var/nix/gcroots/auto /nix/var/nix/profiles/per-user/"$USER" \
    /nix/var/nix/temproots /nix/var/log/nix/drvs
}

if [ "$source" = debian ]; then
  install_from_debian
  nix=/usr/bin/nix
else
  install_with_installer
  nix=/nix/var/nix/profiles/default/bin/nix
fi

"$nix" --version
features=$("$nix" config show experimental-features 2>/dev/null ||
  "$nix" show-config | sed -n 's/^experimental-features = //p')
case " $features " in
  *" flakes "*) ;;
  *) die "flakes are not enabled (experimental-features = '$features'); is /etc/nix/nix.conf in place?" ;;
esac
leftover=$(find "$HOME" -mindepth 1 -print -quit)
[ -z "$leftover" ] || die "the home is not empty after the install: $leftover"
