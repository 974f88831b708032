#!/usr/bin/env bash
# Keeps an nginx upstream in step with a Paceline service's SRV records, for nginx before 1.27.3
# (Debian 12 has 1.22), which cannot read SRV records itself (see nginx.conf and
# docs/services.md, "nginx"). Every INTERVAL it asks the master's DNS for the SRV name, writes
# one `server ADDRESS:PORT;` line per ready instance to OUT, and when that changed, reloads
# nginx (gracefully: old workers finish their requests).
#
#   paceline-upstream.sh [--dns 127.0.0.1:5353] [--name _http._tcp.web.prod.paceline]
#                        [--out /etc/nginx/paceline/web.upstream] [--interval 0.5]
#                        [--reload "nginx -s reload"] [--once]
#
# A failed query (the master unreachable) keeps the last file. With no ready instance the
# upstream holds one server marked down, so that nginx answers 502 rather than refusing the
# configuration. Needs dig (Debian's bind9-dnsutils).
set -euo pipefail

dns=127.0.0.1:5353
name=_http._tcp.web.prod.paceline
out=/etc/nginx/paceline/web.upstream
interval=0.5
reload="nginx -s reload"
once=0
while (($#)); do
  case $1 in
    --dns) dns=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --reload) reload=$2; shift 2 ;;
    --once) once=1; shift ;;
    *) echo "paceline-upstream: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# The server lines of the current answer, sorted; fails when the query does.
render() {
  local answer
  answer=$(dig @"${dns%:*}" -p "${dns##*:}" +noall +answer +additional +tries=1 +time=1 \
    "$name" SRV) || return 1
  # "NAME TTL IN SRV PRIORITY WEIGHT PORT TARGET" and, in the additional section,
  # "TARGET TTL IN A ADDRESS".
  local lines
  lines=$(awk '$4 == "A" { a[$1] = $5 }
               $4 == "SRV" { n++; port[n] = $7; target[n] = $8 }
               END { for (i = 1; i <= n; i++) if (target[i] in a)
                       printf "server %s:%s;\n", a[target[i]], port[i] }' <<<"$answer" | sort)
  if [[ -z $lines ]]; then lines="server 127.0.0.1:1 down;  # no ready instance"; fi
  printf '%s\n' "$lines"
}

mkdir -p "$(dirname "$out")"
while true; do
  if lines=$(render); then
    if [[ ! -f $out || $lines != "$(cat "$out")" ]]; then
      printf '%s\n' "$lines" >"$out.tmp"
      mv "$out.tmp" "$out"
      if ((!once)); then $reload; fi
    fi
  elif ((once)); then
    echo "paceline-upstream: no answer for $name from $dns" >&2
    exit 1
  fi
  if ((once)); then exit 0; fi
  sleep "$interval"
done
