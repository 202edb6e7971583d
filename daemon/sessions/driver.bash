# The shell-session driver: the rc file of `bash --noprofile --rcfile driver.bash --noediting -i`,
# started by the daemon (daemon/sessions/driver.ts). It is data the daemon ships, not a script to run.
#
# Descriptors as bash starts: 0 the daemon's control lines, 1/2 the session's stdout/stderr pipes,
# 3 command texts (daemon -> bash), 4 records (bash -> daemon). They are moved here to descriptors
# of bash's choosing (10 and up), so a command's own `exec 3>file` cannot touch them, and every
# command runs with them closed: no child, no background server ever holds them.
#
# A command runs as one top-level line the daemon writes on fd 0:
#   __hl_read SEQ LENGTH A|U; builtin eval "$__hl_cmd" <"$__hl_fifo" 2>&"$__hl_err" {__hl_out}>&- ...
# __hl_read takes exactly LENGTH bytes of command text from fd 3 (A: all ASCII, so characters are
# bytes in any locale; U: read in the C locale, where they are), and eval runs it in the shell
# itself, at the top level (cd, export, declare, functions, aliases, traps, set -e all carry on).
# Its stdin is the session's FIFO (jobs.input, eof), its stderr the session's stderr: bash's own
# stderr is /dev/null between commands, so a prompt (a PS1 a venv or the user changed) goes nowhere.
#
# The end of a command is the record PROMPT_COMMAND writes on the records descriptor, which no
# command can reach by accident: not stdout, not a marker in the output. An interactive shell runs
# PROMPT_COMMAND after every line, also one aborted by `set -u` or a syntax error, so the record
# always comes. Records are NUL-terminated fields (a path may hold any byte but NUL):
#   ready PID BASH_VERSION CWD      once, when this file has run
#   done SEQ STATUS CWD             after each command line
#
# Under `set -e`, bash's report_error() ends even an interactive shell (an unbound variable with
# `set -u`, `${x?}`, a bad substitution, a readonly assignment), past every trap but EXIT, and
# with the command's redirections in place (the records descriptor is closed then). So the EXIT
# trap of a shell dying under a command that did not call `exit` writes files instead: what it can
# save (variables, functions, aliases, options, umask) to FIFO.state, its cwd to FIFO.cwd; the
# daemon finds them and starts the next shell in that cwd with __HL_RESTORE pointing at the state.
set +o history +H
unset HISTFILE MAILCHECK PROMPT_DIRTRIM TMOUT
PS1='' PS2='' PS0='' PS4='+ '
exec {__hl_out}>&4 4>&- {__hl_in}<&3 3<&- {__hl_err}>&2 2>/dev/null
__hl_fifo="$__HL_DIR/stdin"
unset __HL_DIR
if ! mkfifo -m 600 -- "$__hl_fifo" 2>&"$__hl_err"; then exit 70; fi
readonly __hl_out __hl_in __hl_err __hl_fifo
__hl_seq=0 __hl_st='' __hl_e='' __hl_cmd='' __hl_running='' __hl_deliberate=''

# `set -e` exits even an interactive shell. Instead, a failure that errexit would act on (the ERR
# trap fires on exactly those) ends the command: its status is kept, errexit is switched off for an
# instant so the shell survives, and SIGINT to the shell itself aborts the rest of the line, as
# Ctrl-C would. The prompt puts `set -e` back for the next command. In a subshell errexit does its
# own work (the subshell exits, and its parent's failure comes back here). set -E carries the
# trap into functions, where set -e failures happen too.
set -E
trap '__hl_s=$?; if (( BASH_SUBSHELL == 0 )) && [[ $- == *e* ]]; then __hl_st=$__hl_s; builtin set +e; __hl_e=1; builtin kill -INT $$; fi' ERR

__hl_prompt() {
  local s=$?
  if (( __hl_seq > 0 )); then builtin printf 'done\0%s\0%s\0%s\0' "$__hl_seq" "${__hl_st:-$s}" "${PWD-}" >&"$__hl_out"; fi
  __hl_st='' __hl_running=''
  if [[ -n $__hl_e ]]; then __hl_e=''; builtin set -e; fi
}

# `exit` as a command means it: no state is saved (and bash's "exit" notice is not printed).
exit() {
  __hl_deliberate=1
  builtin exit "$@" 2>/dev/null
}

__hl_died() {
  local s=$?
  [[ -n $__hl_running && -z $__hl_deliberate ]] || return 0
  builtin printf '%s\0' "${PWD-}" >"$__hl_fifo.cwd"
  { builtin declare -p; builtin declare -f; builtin alias -p; builtin shopt -p; builtin umask -p; builtin set +o; } >"$__hl_fifo.state" 2>/dev/null
  return "$s"
}
trap __hl_died EXIT

__hl_read() {
  __hl_seq=$1 __hl_st='' __hl_running=1
  if [[ $3 == A ]]; then IFS= builtin read -r -N "$2" -u "$__hl_in" __hl_cmd; else __hl_read_bytes "$2"; fi
}

# In a function of its own, so the C locale ends with the read and never reaches the command.
__hl_read_bytes() {
  local LC_ALL=C
  IFS= builtin read -r -N "$1" -u "$__hl_in" __hl_cmd
}

declare -r PROMPT_COMMAND=__hl_prompt
readonly -f __hl_prompt __hl_read __hl_read_bytes __hl_died exit

# A shell that replaces one that died takes its state back; what cannot be restored is ignored
# (readonly variables, the driver's own names). Last, since it may turn on set -e and set -u.
if [[ -n ${__HL_RESTORE-} ]]; then
  __hl_marker=${AGENT_JOB_ID-}
  builtin source "$__HL_RESTORE" >/dev/null 2>&1
  builtin export AGENT_JOB_ID="$__hl_marker" # this shell's, not the dead one's: its processes are found by it
  __hl_st='' __hl_e='' __hl_running='' __hl_deliberate=''
fi
builtin unset __HL_RESTORE
builtin printf 'ready\0%s\0%s\0%s\0' "$$" "$BASH_VERSION" "${PWD-}" >&"$__hl_out"
