/**
 * Who holds a pane's terminal: the pane's own shell, or something it started.
 *
 * tmux names the foreground process (`pane_current_command`) but not which process it is, and
 * a bash script blocked in `read` is named `bash` just like the pane's interactive shell. The
 * kernel knows: the shell's process group and its terminal's foreground process group
 * (`tpgid`) are equal exactly when the shell itself is what reads the keyboard.
 *
 * The question is asked as a `/bin/sh` command for tmux's `if-shell` (the server runs it, so
 * this process needs no permission to read `/proc` or start `ps`, and the answer decides the
 * act in the same tmux command line). Only the pid, a number, goes into it.
 *
 * @module
 */

/**
 * A shell command that exits 0 exactly when process `pid` holds its terminal: from
 * `/proc/PID/stat` on Linux (the command name in parentheses may hold anything, so the fields
 * are read after the LAST `)`), from `ps` elsewhere (macOS, the BSDs). No `#` twice in a row:
 * tmux expands the command as a format first, which turns `##` into `#` (`${s##*)}` would
 * become `${s#*)}` and stop at a `)` a process put in its own name), so the cut is a loop.
 * The file is read by the shell's own `read`, line by line (a name may hold a newline, and the
 * kernel prints it raw), so no process is started for it: a `$(cat ...)` costs a fork and an
 * exec, about 1 ms on every guarded act.
 */
export function shellHoldsTerminal(pid: number): string {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new RangeError(`not a pid: ${pid}`);
  const stat = `/proc/${pid}/stat`;
  return `if [ -r ${stat} ]; then s=; ` +
    `{ while IFS= read -r l || [ -n "$l" ]; do s="$s $l"; done; } < ${stat} || exit 1; ` +
    `while case $s in *")"*) true ;; *) false ;; esac; do s=\${s#*)}; done; set -- $s; ` +
    `[ -n "$3" ] && [ "$3" = "$6" ]; ` +
    `else set -- $(ps -o pgid= -o tpgid= -p ${pid}) && [ $# -eq 2 ] && [ "$1" = "$2" ]; fi`;
}
