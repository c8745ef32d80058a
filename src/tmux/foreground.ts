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
 * A shell command that exits 0 exactly when process `pid` holds its terminal: its process group
 * is the terminal's foreground group, and no child of it in that group reads the terminal.
 *
 * The second half matters for a shell without job control (`sh -c 'vim notes; exec sh'`, or an
 * interactive shell after `set +m`): it runs its programs in its own process group, so the
 * group test alone says the shell holds the terminal while vim, python or cat reads it (and
 * tmux names the group's leader, the shell). A child in the group counts unless its standard
 * input is positively another file than the shell's (an `&` job of such a shell reads
 * /dev/null); a zombie does not count.
 *
 * Linux: from `/proc` (the command name in parentheses may hold anything, so the fields are
 * read after the LAST `)`; the children from `/proc/PID/task/PID/children`, or a scan of
 * `/proc` where the kernel lacks that file). Elsewhere (macOS, the BSDs): from `ps`, every child
 * in the group counting. No `#` twice in a row: tmux expands the command as a format first,
 * which turns `##` into `#` (`${s##*)}` would become `${s#*)}` and stop at a `)` a process put
 * in its own name), so the cut is a loop. A stat file is read by the shell's own `read`, line
 * by line (a name may hold a newline, and the kernel prints it raw), so no process is started
 * for it: a `$(cat ...)` costs a fork and an exec, about 1 ms on every guarded act.
 */
export function shellHoldsTerminal(pid: number): string {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new RangeError(`not a pid: ${pid}`);
  const p = `/proc/${pid}`;
  // st FILE: s = the fields of a stat file after the command name.
  const st = `st() { s=; { while IFS= read -r l || [ -n "$l" ]; do s="$s $l"; done; } < "$1" ` +
    `|| return 1; while case $s in *")"*) true ;; *) false ;; esac; do s=\${s#*)}; done; }; `;
  return `if [ -r ${p}/stat ]; then ${st}` +
    `st ${p}/stat 2>/dev/null || exit 1; set -- $s; [ -n "$3" ] && [ "$3" = "$6" ] || exit 1; ` +
    `g=$3; k=; if [ -r ${p}/task/${pid}/children ]; then ` +
    `read -r k < ${p}/task/${pid}/children || true; ` +
    `else for d in /proc/[0-9]*; do k="$k \${d#/proc/}"; done; fi; ` +
    `for c in $k; do [ "$c" = ${pid} ] && continue; st /proc/$c/stat 2>/dev/null || continue; ` +
    `set -- $s; [ "$1" != Z ] && [ "$2" = ${pid} ] && [ "$3" = "$g" ] || continue; ` +
    `[ -e /proc/$c/fd/0 ] && ! [ /proc/$c/fd/0 -ef ${p}/fd/0 ] && continue; exit 1; done; ` +
    `exit 0; else set -- $(ps -o pgid= -o tpgid= -p ${pid}) && [ $# -eq 2 ] && ` +
    `[ "$1" = "$2" ] || exit 1; g=$1; ps -A -o ppid= -o pgid= | { while read -r a b; do ` +
    `[ "$a" = ${pid} ] && [ "$b" = "$g" ] && exit 1; done; exit 0; }; fi`;
}
