# shellcheck shell=bash source-path=SCRIPTDIR
# System-wide rc for interactive bash shells in the hotline desktop image.
# The image keeps nothing in the home, so this file is the whole interactive setup; a user's own
# ~/.bashrc (on the home volume) still runs after it and wins.

# Not interactive: nothing to do.
case $- in
  *i*) ;;
  *) return ;;
esac

# Terminals of the desktop start non-login shells, which do not read /etc/profile.
if [ -r /etc/profile.d/hotline.sh ]; then
  # shellcheck source=profile.d/hotline.sh
  . /etc/profile.d/hotline.sh
fi

# History lives in the home, so it survives a container recreate; write each line at once.
HISTFILE="${HISTFILE:-$HOME/.bash_history}"
HISTSIZE=50000
HISTFILESIZE=100000
HISTCONTROL=ignoreboth
HISTTIMEFORMAT='%F %T '
shopt -s histappend cmdhist checkwinsize
case ";${PROMPT_COMMAND:-};" in
  *";history -a;"*) ;;
  *) PROMPT_COMMAND="history -a${PROMPT_COMMAND:+;$PROMPT_COMMAND}" ;;
esac

# Prompt: user@host and the working directory; the exit status when a command failed.
hotline_prompt_status() {
  local status=$?
  if [ "$status" -ne 0 ]; then printf '[%s] ' "$status"; fi
}
PS1='$(hotline_prompt_status)\u@\h:\w\$ '
case "$TERM" in
  xterm* | screen* | tmux* | vte*) PS1="\[\e]0;\u@\h: \w\a\]$PS1" ;;
esac

if command -v dircolors >/dev/null 2>&1; then
  eval "$(dircolors -b)"
  alias ls='ls --color=auto'
  alias grep='grep --color=auto'
fi

# Programmable completion, including nix's when a Nix profile provides it.
if ! shopt -oq posix; then
  if [ -f /usr/share/bash-completion/bash_completion ]; then
    # shellcheck source=/dev/null
    . /usr/share/bash-completion/bash_completion
  fi
fi
