# bash completion for nictunectl(1): subcommands, options, profile names (as
# `nictunectl profiles` lists them, with the --profiles-dir, --bus-address
# and --direct already on the line) and interface names (/sys/class/net).
# zsh runs it too (nictunectl.zsh.in).
# Installed as /usr/share/bash-completion/completions/nictunectl; needs no
# helper from the bash-completion package. The option lists are the ones
# `nictunectl [SUBCOMMAND] --help` prints; tests/operators/check-completion
# keeps them equal.

_nictunectl_profiles() {
    local cmd=$1
    shift
    # Unindented lines are "NAME  description"; their paths are indented.
    local line
    "$cmd" "$@" profiles 2>/dev/null | while IFS= read -r line; do
        [[ $line == [![:space:]]* && $line != 'no profiles found' ]] && printf '%s\n' "${line%%[[:space:]]*}"
    done
}

_nictunectl_interfaces() {
    local d
    for d in /sys/class/net/*; do
        [[ -e $d ]] && printf '%s\n' "${d##*/}"
    done
}

_nictunectl() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local global_args='--profiles-dir --state-dir --config --bus-address --color --facts'
    local global_flags='-h --help --version --direct'
    local subcommands='audit apply diff rollback profiles status reload keys probe confirm'

    # The subcommand, the options that change where profiles come from, and
    # the positional words after the subcommand.
    local i w sub= ctx=() npos=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --profiles-dir | --bus-address)
                ctx+=("$w" "${COMP_WORDS[i + 1]}")
                ((i++))
                ;;
            --state-dir | --config | --color | --facts | --profile | --sample | --rtt-ms | \
                --interface | --count | --timeout | --time | --streams | --port | \
                --verify-peer | --min-gbps | --max-regression | --probe-time | --probe-streams | \
                --probe-port | --probe-timeout | --settle) ((i++)) ;;
            --direct) ctx+=("$w") ;;
            -*) ;;
            *)
                if [[ -z $sub ]]; then sub=$w; else ((npos++)); fi
                ;;
        esac
    done

    local IFS=$'\n'
    case $prev in
        --profiles-dir | --state-dir)
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --facts | --config)
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --color)
            COMPREPLY=($(compgen -W $'auto\nalways\nnever' -- "$cur"))
            return
            ;;
        --bus-address | --sample | --rtt-ms | --count | --timeout | --time | --streams | --port | \
            --verify-peer | --min-gbps | --max-regression | --probe-time | --probe-streams | \
            --probe-port | --probe-timeout | --settle)
            COMPREPLY=()
            return
            ;;
        --interface)
            COMPREPLY=($(compgen -W "$(_nictunectl_interfaces)" -- "$cur"))
            return
            ;;
        --profile)
            COMPREPLY=($(compgen -W "$(_nictunectl_profiles "${COMP_WORDS[0]}" "${ctx[@]}")" -- "$cur"))
            return
            ;;
    esac
    unset IFS

    if [[ -z $sub ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global_args $global_flags" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
        fi
        return
    fi

    local opts=
    case $sub in
        audit) opts='--profile --json --prometheus --all -v --verbose --no-health --sample --rtt-ms' ;;
        apply) opts='--dry-run --json --force --keep-going --verify-peer --min-gbps --max-regression
            --probe-time --probe-streams --probe-port --probe-timeout --settle' ;;
        diff) opts='--json --force' ;;
        rollback | profiles | status) opts='--json' ;;
        reload) opts= ;;
        keys) opts='--json --markdown --man' ;;
        probe) opts='--interface --json --throughput --time --streams --reverse --port --count --timeout' ;;
        confirm) opts='--json --settle --probe-timeout --probe-time --probe-port' ;;
        *) return ;;
    esac
    if [[ $cur == -* ]]; then
        # Global options may follow the subcommand too.
        COMPREPLY=($(compgen -W "$opts $global_args $global_flags" -- "$cur"))
        return
    fi
    local IFS=$'\n'
    case $sub in
        apply | diff)
            if ((npos == 0)); then
                COMPREPLY=($(compgen -W "$(_nictunectl_profiles "${COMP_WORDS[0]}" "${ctx[@]}")" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$(_nictunectl_interfaces)" -- "$cur"))
            fi
            ;;
        audit | rollback)
            COMPREPLY=($(compgen -W "$(_nictunectl_interfaces)" -- "$cur"))
            ;;
        *) COMPREPLY=() ;;
    esac
}

complete -F _nictunectl nictunectl
