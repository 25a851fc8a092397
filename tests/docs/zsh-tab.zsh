# SPDX-License-Identifier: LGPL-2.1-or-later
# zsh tab.zsh FPATH_DIR PATH_DIR LINE: the line after a TAB in an interactive zsh.
zmodload zsh/zpty || exit 1
zpty z "env -i PATH=$2:/usr/bin:/bin HOME=/nonexistent TERM=dumb zsh -f -i"
zpty -w z "PS1='> '; fpath=($1 \$fpath); autoload -U compinit; compinit -D -u; setopt nobeep"
zpty -w -n z "$3"$'\t'
local out= chunk
integer i
# Until the completion has written something after the typed line (under load compinit and
# the completion's kubemount take seconds: a fixed sleep lost that race), at most 20 s.
for (( i = 0; i < 200; i++ )); do
        zpty -r -t z chunk && out+=$chunk
        [[ $out == *"$3"?* ]] && break
        sleep 0.1
done
sleep 0.2 # the rest of the redraw
zpty -w z $'\001print -r -- RESULT:'
out=
for (( i = 0; i < 50; i++ )); do
        zpty -r -t z chunk && out+=$chunk
        [[ $out == *$'\n'RESULT:* ]] && [[ ${out##*$'\n'RESULT:} == *$'\n'* ]] && break
        sleep 0.1
done
zpty -d z
out=${out##*$'\n'RESULT:}
print -r -- "${out%%$'\r'*}"
