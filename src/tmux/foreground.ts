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
 * Whether `command` (a pane's `pane_current_command`) may be tmux's own child for a new pane,
 * not yet its program: tmux forks a child, which runs tmux itself (the server's command line)
 * until it has entered the start folder and exec'd the program, and names the pane's command
 * after it meanwhile, for as long as a loaded machine takes. A program really named tmux (a
 * nested client) looks the same.
 */
export function tmuxChild(command: string): boolean {
  return command === "tmux";
}

/**
 * Whether a pane has drawn nothing yet: no history, the cursor at the top left, and the normal
 * screen (a program that switched to the alternate one has drawn: a tmux client does at once,
 * and then keeps no history there, its cursor where the pane it shows has one, at the top left
 * in a fresh editor).
 */
export function drawnNothing(
  p: {
    readonly historySize: number;
    readonly cursorX: number;
    readonly cursorY: number;
    readonly alternateScreen: boolean;
  },
): boolean {
  return p.historySize === 0 && p.cursorX === 0 && p.cursorY === 0 && !p.alternateScreen;
}

/**
 * A shell command that exits 0 exactly when process `pid` holds its terminal: its process group
 * is the terminal's foreground group, and no child of it in that group reads the terminal.
 *
 * The second half matters for a shell without job control (`sh -c 'vim notes; exec sh'`, or an
 * interactive shell after `set +m`): it runs its programs in its own process group, so the
 * group test alone says the shell holds the terminal while vim, python or cat reads it (and
 * tmux names the group's leader, the shell). A child in the group counts unless its standard
 * input is positively another file than the shell's (an `&` job of such a shell reads
 * /dev/null) and it has the terminal open on no other descriptor but its output and error: a
 * program that moved its input away, or was given /dev/null inside a `$(...)`, still reads the
 * terminal through `/dev/tty` or the pane's terminal opened by its path (on fd 3 and up). Its
 * output and error are not looked at: an `&` job prints to the terminal through them, as does
 * any `$(...)` on its error, though a program could read it through them too (in a `$(...)`
 * the shell then waits on its pipe, which `idle` tells; an `&` job of a shell without job
 * control, beside the shell at its prompt, is not told). A zombie does not count. Each such
 * child's descriptors are listed by the shell's own glob and compared by `test -ef`, no process
 * started.
 *
 * Linux: from `/proc` (the command name in parentheses may hold anything, so the fields are
 * read after the LAST `)`; the children from `/proc/PID/task/PID/children`, or a scan of
 * `/proc` where the kernel lacks that file). Elsewhere (macOS, the BSDs): from `ps`, every child
 * in the group counting. No `#` twice in a row: tmux expands the command as a format first,
 * which turns `##` into `#` (`${s##*)}` would become `${s#*)}` and stop at a `)` a process put
 * in its own name), so the cut is a loop. A stat file is read by the shell's own `read`, line
 * by line (a name may hold a newline, and the kernel prints it raw), so no process is started
 * for it: a `$(cat ...)` costs a fork and an exec, about 1 ms on every guarded act.
 *
 * `idle`: also that the shell is not busy itself ({@link shellIdle}): a shell in `wait`, in
 * a loop of builtins or reading a `$(...)`'s pipe holds its terminal, but is not at its prompt.
 */
export function shellHoldsTerminal(pid: number, options: { idle?: boolean } = {}): string {
  const p = procOf(pid);
  // The shell itself busy (`idle`): it holds the terminal, but is not at its prompt.
  const idle = options.idle ? `${BUSY(p)}bz && exit 1; ` : "";
  return `if [ -r ${p}/stat ]; then ${ST}` +
    `st ${p}/stat 2>/dev/null || exit 1; set -- $s; [ -n "$3" ] && [ "$3" = "$6" ] || exit 1; ` +
    `g=$3; k=; if [ -r ${p}/task/${pid}/children ]; then ` +
    `read -r k < ${p}/task/${pid}/children || true; ` +
    `else for d in /proc/[0-9]*; do k="$k \${d#/proc/}"; done; fi; ` +
    `for c in $k; do [ "$c" = ${pid} ] && continue; st /proc/$c/stat 2>/dev/null || continue; ` +
    `set -- $s; [ "$1" != Z ] && [ "$2" = ${pid} ] && [ "$3" = "$g" ] || continue; ` +
    `if [ -e /proc/$c/fd/0 ] && ! [ /proc/$c/fd/0 -ef ${p}/fd/0 ]; then t=; ` +
    `for f in /proc/$c/fd/*; do case $f in */fd/[12]) continue ;; esac; ` +
    `if [ "$f" -ef ${p}/fd/0 ] || [ "$f" -ef /dev/tty ]; then t=1; break; fi; done; ` +
    `[ -z "$t" ] && continue; fi; exit 1; done; ` +
    `${idle}exit 0; else set -- $(ps -o pgid= -o tpgid= -p ${pid}) && [ $# -eq 2 ] && ` +
    `[ "$1" = "$2" ] || exit 1; g=$1; ps -A -o ppid= -o pgid= | { while read -r a b; do ` +
    `[ "$a" = ${pid} ] && [ "$b" = "$g" ] && exit 1; done; exit 0; }; fi`;
}

/**
 * A shell command that exits 0 unless process `pid` (a shell) is busy itself, not waiting for
 * a line at its prompt: it runs (kernel state `R`: a loop of builtins), or it waits for a
 * child (`wait` with `&` jobs, which leaves the terminal to the shell: bash and the kernel's
 * `do_wait`, dash and zsh in `sigsuspend`), or it reads or writes a pipe: a command
 * substitution's, `x=$(prog </dev/null)`, whose program runs in the shell's process group and
 * may read the terminal through another descriptor than its input (the kernel's
 * `anon_pipe_read`, `pipe_read` before Linux 6.14, `pipe_wait` before 5.5; a FIFO still being
 * opened, `wait_for_partner`). A shell at its prompt reads its terminal (bash in `poll`, dash
 * and zsh in the terminal's `wait_woken`), never a pipe. A shell drawing its prompt runs for a
 * moment too (and reads the pipe of a `$(...)` in PS1 or PROMPT_COMMAND), so it counts as busy
 * only when three looks 20 ms apart all say so (the `sleep` is started only while it looks
 * busy). A builtin that reads the keyboard (`read`) waits as a shell at its prompt does, and is
 * not told apart. Linux only (`/proc`); elsewhere, or where the kernel hides the wait channel,
 * a shell is never busy by this test.
 */
export function shellIdle(pid: number): string {
  const p = procOf(pid);
  return `if [ -r ${p}/stat ]; then ${ST}${BUSY(p)}bz && exit 1; fi; exit 0`;
}

/**
 * A shell command that exits 0 when process `child` descends from process `ancestor`: its
 * parent, or a parent's parent, up to 64 steps (a tmux client a person started under a wrapper
 * in a pane, `script`, `asciinema rec` or `sudo`, descends from the pane's process). Linux: from
 * `/proc` (each stat file read by the shell's own `read`, see {@link shellHoldsTerminal});
 * elsewhere `ps`. Exits 1 when it cannot tell (a process gone on the way): such a client is
 * taken for none.
 */
export function descendsFrom(child: number, ancestor: number): string {
  procOf(child);
  procOf(ancestor);
  return `${ST}p=${child}; n=0; while [ "$p" -gt 1 ] 2>/dev/null && [ $n -lt 64 ]; do ` +
    `[ "$p" = ${ancestor} ] && exit 0; if [ -r /proc/$p/stat ]; then ` +
    `st /proc/$p/stat 2>/dev/null || exit 1; set -- $s; p=$2; ` +
    `else p=$(ps -o ppid= -p $p) || exit 1; set -- $p; p=$1; fi; n=$((n+1)); done; exit 1`;
}

/**
 * A shell command that exits 0 when a tmux client a person could type into runs at or below
 * process `root` (a pane's): a child of it, or a child's child, whose name says tmux (tmux names
 * its processes after the name it was started by, so a copy or link of it run as `tx` is `tx:
 * client`), or `root` itself named as a client (a pane's child that has yet to exec its program
 * is still named as tmux's server), that does more than wait on a channel (`wait-for`) and whose
 * input is not a pipe, a socket or nothing (a program's control client, such as another
 * tmux-mcp's in an agent's pane, is not one; a terminal reached by any path is). A client of
 * another server started under a wrapper (`script`, `asciinema rec`, `sudo`) or by a script in
 * a pane runs where tmux's name for the pane's program does not tell it. Linux: down from `root`
 * by `/proc/PID/task/TID/children`, generation by generation, read by the shell's own `read`;
 * where the kernel keeps no such file, or elsewhere, from `ps`'s list of every process (there
 * a control client is known by its `-C`, and a client run by another name is not known). Exits
 * 0 too when it cannot tell: more than 1 024 processes below, a client's input that cannot be
 * read, no `ps`.
 */
export function tmuxBelow(root: number): string {
  const p = procOf(root);
  const found = `a=$(tr '\\0' ' ' < /proc/$r/cmdline 2>/dev/null); case " $a " in ` +
    `*' wait-for '*|*' wait '*) ;; *) l=$(readlink /proc/$r/fd/0 2>/dev/null) || exit 0; ` +
    `case $l in pipe:*|socket:*|anon_inode:*|/dev/null) ;; *) exit 0 ;; esac ;; esac`;
  const walk = `g=${root}; n=0; while [ -n "$g" ]; do x=; for r in $g; do n=$((n+1)); ` +
    `[ $n -le 1024 ] || exit 0; c=; read -r c < /proc/$r/comm 2>/dev/null; ` +
    `if [ "$r" = ${root} ]; then case $c in *': c'*) ${found} ;; esac; ` +
    `else case $c in tmux*|*': c'*) ${found} ;; esac; fi; ` +
    `for f in /proc/$r/task/*/children; do [ -r "$f" ] || continue; l=; ` +
    `read -r l < "$f" || :; x="$x $l"; done; done; g=$x; done; exit 1`;
  const ps = `o=$(ps -A -o pid= -o ppid= -o args= 2>/dev/null) || exit 0; ` +
    `printf '%s\\n' "$o" | awk -v r=${root} '{ par[$1] = $2; a = $3; ` +
    `for (i = 4; i <= NF; i++) a = a " " $i; arg[$1] = a; m = split($3, w, "/"); ` +
    `nm[$1] = w[m] } END { for (x in par) { ` +
    `if (index(arg[x], ": c") == 0 && (x == r || nm[x] !~ /^tmux/)) continue; ` +
    `if (index(arg[x] " ", " -C") > 0 || index(arg[x] " ", " wait-for ") > 0 || ` +
    `index(arg[x] " ", " wait ") > 0) continue; y = x; ` +
    `k = 0; while (y > 1 && k < 64) { if (y == r) exit 0; y = par[y]; k++ } } exit 1 }'`;
  return `if [ -r ${p}/task/${root}/children ]; then ${walk}; else ${ps}; fi`;
}

function procOf(pid: number): string {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new RangeError(`not a pid: ${pid}`);
  return `/proc/${pid}`;
}

/** st FILE: s = the fields of a stat file after the command name. */
const ST = `st() { s=; { while IFS= read -r l || [ -n "$l" ]; do s="$s $l"; done; } < "$1" ` +
  `|| return 1; while case $s in *")"*) true ;; *) false ;; esac; do s=\${s#*)}; done; }; `;

/** bz: returns 0 when the shell at `p` is busy in three looks (see {@link shellIdle}). */
const BUSY = (p: string) =>
  `bz() { n=0; while :; do st ${p}/stat 2>/dev/null || return 1; set -- $s; ` +
  `if [ "$1" != R ]; then w=; read -r w 2>/dev/null < ${p}/wchan || :; case $w in ` +
  `do_wait*|kernel_wait4*|*sigsuspend*|*pipe_read*|*pipe_write*|pipe_wait*|wait_for_partner*) ;; ` +
  `*) return 1 ;; esac; fi; n=$((n+1)); ` +
  `[ $n -ge 3 ] && return 0; sleep 0.02 2>/dev/null || :; done; }; `;
