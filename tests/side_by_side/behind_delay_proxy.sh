#!/usr/bin/env bash
# A runtime behind delay_proxy.py, for a host-side slowdown made on purpose (issue 41 item 4): the
# command runs with its --port value replaced by a free loopback port, and the proxy listens on the
# port asked for, holding each new connection's first bytes DELAY_S seconds.
# usage: behind_delay_proxy.sh DELAY_S COMMAND [ARGS...]   (COMMAND may be a loader and its options)
delay=$1
shift
args=("$@")
idx=-1
for ((i = 1; i < ${#args[@]}; i++)); do [ "${args[i]}" = --port ] && idx=$((i + 1)); done
if ((idx > 0 && idx < ${#args[@]})); then
  outer=${args[idx]}
  inner=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  args[idx]=$inner
  python3 "$(cd "$(dirname "$0")" && pwd)/delay_proxy.py" "$outer" "$inner" "$delay" </dev/null >/dev/null 2>&1 &
fi
exec "${args[@]}"
