# shellcheck shell=sh
# Environment of the hotline desktop image for login shells (/etc/profile sources this file) and,
# through /etc/bash.bashrc, for interactive ones. The same values are in the image's ENV for
# processes that no shell starts (supervisord, the daemon, `docker exec`).

# AppImages cannot mount with FUSE in a container: extract and run instead.
export APPIMAGE_EXTRACT_AND_RUN=1
export NIX_SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt

# The user's own Nix profile first, then the image's (where Nix itself is), then the daemon's CLI.
hotline_path_prepend() {
  case ":${PATH}:" in
    *":$1:"*) ;;
    *) PATH="$1${PATH:+:$PATH}" ;;
  esac
}
hotline_path_prepend /opt/hotline/bin
hotline_path_prepend /nix/var/nix/profiles/default/bin
if [ -n "${HOME:-}" ]; then hotline_path_prepend "$HOME/.nix-profile/bin"; fi
unset -f hotline_path_prepend
export PATH

# Desktop entries and icons that Nix packages bring.
XDG_DATA_DIRS="${HOME:+$HOME/.nix-profile/share:}/nix/var/nix/profiles/default/share:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
export XDG_DATA_DIRS
