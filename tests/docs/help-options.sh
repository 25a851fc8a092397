# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by docs-check.sh and completion-check.sh: what `kubemount --help`
# and `kubemount COMMAND --help` say a command has, and their TAP output.

# check DESC CMD...: one TAP line, CMD's exit status decides; tap_done: the plan, the exit status.
n=0 failed=0
check() {
        local desc=$1
        shift
        n=$((n + 1))
        if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
tap_done() {
        echo "1..$n"
        exit $((failed > 0))
}

# The commands of the dispatch table in src/cli/main.c (SOURCE_ROOT).
table_commands() {
        sed -n 's/^ *{ "\([a-z-]*\)", cmd_[a-z_]*, [A-Z_0-9]* },$/\1/p' "$1/src/cli/main.c"
}

# The options a help text (stdin) names, one per line: every -x and --long in
# its Usage lines that run WORDS (e.g. "vcs pull"; none: every Usage line), and
# in the first column of its option lines (indented, starting with "-"), up to
# the first gap of two blanks.  Sections whose heading says "global" are
# skipped unless ONLY_GLOBAL is 1, which takes those sections alone.
help_options() { # ONLY_GLOBAL [WORDS...]
        local only_global=$1
        shift
        awk -v words="$*" -v only_global="$only_global" '
                function take(text,   t) {
                        while (match(text, /(^|[][ ,|\/])--?[a-zA-Z][a-zA-Z0-9-]*/)) {
                                t = substr(text, RSTART, RLENGTH)
                                sub(/^[^-]*/, "", t)
                                print t
                                text = substr(text, RSTART + RLENGTH)
                        }
                }
                /^[^ ].*:$/ { global = tolower($0) ~ /global/; next }
                /^(Usage:)? +kubemount / {
                        if (!only_global && (words == "" || index($0, " " words " ") || $0 ~ (" " words "$"))) take($0)
                        next
                }
                /^  +-/ {
                        if (global != (only_global == 1)) next
                        line = $0
                        sub(/^ +/, "", line)
                        sub(/  .*/, "", line)
                        take(line)
                }' | sort -u
}
