#!/bin/sh
# make bench: measures skillhost side by side with bash, bubblewrap and
# Anthropic's sandbox-runtime (srt) and writes docs/benchmarks.md.
#
#   ./bench/run.sh                 everything (about 10 minutes on 2 cores)
#   ROUNDS=10 SIZES="1000" ./bench/run.sh   quicker
#   OUT=/tmp/b.md ./bench/run.sh   write elsewhere
#   BASE=bfdf9c2 ./bench/run.sh    also the runs of that commit, side by side
#
# Whole commands are timed by bench/oneshot in interleaved rounds (each
# round runs every case once, in rotating order), so a machine that gets
# busier or quieter shifts all cases alike; CPU time counts every process of
# a command, which stays meaningful on a busy machine. Missing tools are
# installed into a scratch directory (srt, from npm) or from Debian
# (bubblewrap, socat, ripgrep) when this user may; a case whose tool cannot
# be had is skipped with a note in the report.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
work=${BENCH_WORK:-$root/bench/.work}
rounds=${ROUNDS:-20}
sizes=${SIZES:-1000 10000 50000}
out=${OUT:-docs/benchmarks.md}
mkdir -p "$work/bin"
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
notes=""
note() { notes="$notes
- $*"; echo "note: $*" >&2; }

echo "== build" >&2
# Static and without gRPC's tracing, as make build and the tests build
# them; a BASE commit below is built as it was.
CGO_ENABLED=0 go build -tags grpcnotrace -o "$work/bin/" ./cmd/... ./bench/oneshot ./bench/genskills ./bench/loopserve ./bench/phases ./bench/warm
# The bubblewrap backend of examples/, a plugin beside the others.
CGO_ENABLED=0 go build -o "$work/bin/skillhost-sandbox-bwrap" ./examples/plugin-bwrap
bin=$work/bin
sh_=$bin/skillhost

# --- tools -----------------------------------------------------------------
apt_install() { # apt_install PACKAGE...: from Debian, as root or with sudo -n
	if ! command -v apt-get >/dev/null 2>&1; then return 1; fi
	if [ "$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else return 1; fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" >"$work/apt.log" 2>&1
}
for pair in bubblewrap:bwrap socat:socat ripgrep:rg; do
	pkg=${pair%%:*} cmd=${pair##*:}
	command -v "$cmd" >/dev/null 2>&1 || apt_install "$pkg" || note "could not install $pkg from Debian"
done
srt=$work/srt/node_modules/.bin/srt
if [ ! -x "$srt" ] && command -v npm >/dev/null 2>&1; then
	npm install --silent --no-audit --no-fund --prefix "$work/srt" @anthropic-ai/sandbox-runtime >"$work/npm.log" 2>&1 ||
		note "npm could not install @anthropic-ai/sandbox-runtime (see $work/npm.log)"
fi

# --- fixture -----------------------------------------------------------------
skills=$work/skills
mkdir -p "$skills/echo/scripts" "$skills/big/scripts"
printf -- '---\nname: echo\ndescription: Says hi\n---\nSay hi.\n' >"$skills/echo/SKILL.md"
printf '#!/bin/bash\necho hi\n' >"$skills/echo/scripts/hi.sh"
printf -- '---\nname: big\ndescription: Prints a lot\n---\nPrints N bytes.\n' >"$skills/big/SKILL.md"
printf '#!/bin/sh\nexec head -c "$1" /dev/zero\n' >"$skills/big/scripts/out.sh"
for s in scripted_skill test_skill; do cp -r testdata/skills/$s "$skills/"; done
# net: network by name (127.0.0.2 only), the same echo plus a download.
mkdir -p "$skills/net/scripts"
printf -- '---\nname: net\ndescription: Reaches one host\nnetwork: ["127.0.0.2"]\n---\nSay hi, or fetch.\n' >"$skills/net/SKILL.md"
printf '#!/bin/bash\necho hi\n' >"$skills/net/scripts/hi.sh"
printf '#!/bin/sh\nexec curl -sS -o /dev/null -w "%%{size_download}\\n" "$@"\n' >"$skills/net/scripts/get.sh"
chmod +x "$skills"/*/scripts/*
script=$skills/echo/scripts/hi.sh
cfg=$work/config.yaml
printf 'skills:\n  roots: [%s]\nsandbox:\n  output_limit: 200MiB\n' "$skills" >"$cfg"
printf '{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}\n' >"$work/srt.json"
# The network cases: a ceiling that allows 127.0.0.2 (the server below),
# and one that also holds a credential for it (the proxy then terminates
# TLS to put the key in).
printf 'skills:\n  roots: [%s]\n  grants: {net: {fs_read: [%s]}}\nsandbox:\n  output_limit: 200MiB\n  fs_read: [%s]\n  network: {allow: ["127.0.0.2"]}\n' "$skills" "$work/serve" "$work/serve" >"$work/net.yaml"
printf 'skills:\n  roots: [%s]\nsandbox:\n  output_limit: 200MiB\n  network: {allow: ["127.0.0.2"]}\n  credentials: [{host: 127.0.0.2, header: x-api-key, from_env: BENCH_KEY}]\n' "$skills" >"$work/key.yaml"

# works CMD...: whether a case runs and prints hi (else it is left out)
works() { "$@" 2>"$work/case.err" | grep -q hi; }

cases=$work/cases.txt
: >"$cases"
add() { # add LABEL COMMAND...
	label=$1; shift
	if works "$@"; then
		echo "$label=$*" >>"$cases"
	else
		note "$label left out: $(head -c 300 "$work/case.err" | tr '\n' ' ')"
	fi
}
add bash bash "$script"
bwrap_cmd="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind $skills $skills --unshare-all --die-with-parent --new-session bash $script"
base_strategies="none null landlock"
strategies=$base_strategies
# The bwrap backend needs bubblewrap as much as the bare case does.
if command -v bwrap >/dev/null 2>&1; then
	add bwrap $bwrap_cmd
	strategies="$strategies bwrap"
else
	note "bwrap is not installed"
fi
for st in $strategies; do
	add "skillhost-run-$st" "$sh_" --config "$cfg" run echo hi --strategy "$st"
done
# BASE=<commit>: the same landlock run built from that commit, side by side
# (how the filesystem view was measured against the read-only remount).
# The commit's tree is exported (git archive), not checked out: no worktree
# is added to the repository.
if [ -n "${BASE:-}" ]; then
	base_tree=$work/base-$BASE
	if [ ! -d "$base_tree" ]; then mkdir -p "$base_tree" && git archive "$BASE" | tar -x -C "$base_tree"; fi
	(cd "$base_tree" && go build -o "$work/base-bin/" ./cmd/...)
	for st in $base_strategies; do
		add "skillhost-run-$st@$BASE" "$work/base-bin/skillhost" --config "$cfg" run echo hi --strategy "$st"
	done
fi
add "skillhost-run-landlock-by-name" "$sh_" --config "$work/net.yaml" run net hi --strategy landlock
if [ -x "$srt" ]; then add srt "$srt" -s "$work/srt.json" bash "$script"; else note "srt left out: not installed"; fi
refs="-ref bash"
grep -q '^bwrap=' "$cases" && refs="$refs -ref bwrap"
grep -q '^srt=' "$cases" && refs="$refs -ref srt"
grep -q "^skillhost-run-landlock@" "$cases" && refs="$refs -ref skillhost-run-landlock@$BASE"

echo "== one-shot ($rounds rounds)" >&2
# shellcheck disable=SC2086 # refs is a word list on purpose
oneshot=$("$bin/oneshot" -rounds "$rounds" -expect hi -cases "$cases" $refs)
list=$("$bin/oneshot" -rounds "$rounds" -case "bash=bash $script" -case "skillhost-list=$sh_ --config $cfg list" -ref bash)

# The machine's busy time (/proc/stat) across a block of runs: a measure
# independent of who reaps what, which also counts the kernel's work in
# its own threads (a namespace's teardown). Blocks of 20 runs, the two
# cases alternating; the machine's busy time while idle is measured first
# and taken off for each block's length.
syscheck=""
if [ -r /proc/stat ] && grep -q '^bwrap=' "$cases"; then
	busy() { awk '/^cpu / {print $2+$3+$4+$7+$8}' /proc/stat; } # user nice system irq softirq: not steal
	now() { date +%s.%N; }
	hz=$(getconf CLK_TCK)
	i0=$(busy) t0=$(now); sleep 2; i1=$(busy) t1=$(now)
	idle=$(echo "$i0 $i1 $t0 $t1" | awk '{print ($2-$1)/($4-$3)}') # busy ticks per second while idle
	block() { # block LABEL: busy CPU ms per run over 20 runs
		run=$(grep "^$1=" "$cases" | cut -d= -f2-)
		b0=$(busy) s0=$(now)
		# shellcheck disable=SC2086 # the case's command is a word list on purpose
		for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do $run >/dev/null 2>&1 || echo "$1 failed" >&2; done
		sleep 0.5 # the kernel's deferred teardown
		b1=$(busy) s1=$(now)
		echo "$b0 $b1 $s0 $s1 $idle $hz" | awk '{printf "%.1f", (($2-$1) - $5*($4-$3)) * 1000 / $6 / 20}'
	}
	rows=""
	for _ in 1 2 3 4 5 6; do
		a=$(block bwrap) b=$(block skillhost-run-landlock)
		rows="$rows $a/$b"
	done
	syscheck=$(echo "$rows" | tr ' ' '\n' | grep / | awk -F/ '{print $1, $2, $2/$1}' | sort -k3 -n | awk -v idle="$idle" -v hz="$hz" '
		{a[NR]=$1; b[NR]=$2; r[NR]=$3} END {
			printf "| block of 20 runs | bwrap ms per run | skillhost-run-landlock ms per run | ratio |\n|---|---|---|---|\n"
			for (i = 1; i <= NR; i++) printf "| %d | %.1f | %.1f | %.1f× |\n", i, a[i], b[i], r[i]
			printf "\nMedian of the blocks'"'"' ratios: %.1f× (idle machine: %.0f ms of CPU a second, taken off).\n", (NR % 2) ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2, idle * 1000 / hz }')
fi

echo "== phases of a one-shot run" >&2
# SKILLHOST_TRACE=timing, medians per phase; with BASE, that commit's beside.
set -- -case "null=$sh_ --config $cfg run echo hi --strategy null" -case "landlock=$sh_ --config $cfg run echo hi --strategy landlock"
if [ -n "${BASE:-}" ]; then
	set -- -case "landlock@$BASE=$work/base-bin/skillhost --config $cfg run echo hi --strategy landlock" "$@"
fi
phases=$("$bin/phases" -rounds "$rounds" "$@" 2>&1) || phases="(failed: $phases)"

echo "== warm MCP calls" >&2
mkdir -p "$work/warm-ws"
# With BASE, that commit's server beside this one's for each strategy.
set --
for st in $base_strategies; do
	if [ -n "${BASE:-}" ]; then
		set -- "$@" -case "mcp-$st@$BASE=$work/base-bin/skillhost --config $cfg mcp --strategy $st --tools all --poll 0" \
			-ratio "mcp-$st/mcp-$st@$BASE"
	fi
	set -- "$@" -case "mcp-$st=$sh_ --config $cfg mcp --strategy $st --tools all --poll 0"
done
warm=$(cd "$work/warm-ws" && "$bin/warm" -calls $((rounds * 40)) -rounds "$rounds" -script "$script" -tool echo__hi "$@" 2>&1) || warm="(failed: $warm)"

echo "== staged writes ($rounds rounds)" >&2
# The same echo run under Landlock with a workspace write grant and
# without, each staged (the default) and direct (sandbox.writes: direct).
wscfg=$work/ws.yaml
printf 'skills:\n  roots: [%s]\n  grants:\n    echo:\n      workspace: read-write\n' "$skills" >"$wscfg"
mkdir -p "$work/ws"
staged=$(cd "$work/ws" && XDG_STATE_HOME=$work/state "$bin/oneshot" -rounds "$rounds" -expect hi \
	-case "ws-direct=env SKILLHOST_SANDBOX__WRITES=direct $sh_ --config $wscfg run --strategy landlock echo hi" \
	-case "ws-staged=env SKILLHOST_SANDBOX__WRITES=staged $sh_ --config $wscfg run --strategy landlock echo hi" \
	-case "nows-direct=env SKILLHOST_SANDBOX__WRITES=direct $sh_ --config $cfg run --strategy landlock echo hi" \
	-case "nows-staged=env SKILLHOST_SANDBOX__WRITES=staged $sh_ --config $cfg run --strategy landlock echo hi" \
	-ref ws-direct -ref nows-direct 2>&1) || staged="(failed: $staged)"
applybench=$(go test -run '^$' -bench 'Apply1000|ScanUnchanged' -benchtime 20x ./host/changeset/ 2>&1 | grep '^Benchmark')

echo "== output throughput" >&2
mib=100
bytes=$((mib * 1024 * 1024))
tput=$("$bin/oneshot" -rounds 3 -warmup 1 -bytes $bytes \
	-case "direct=sh $skills/big/scripts/out.sh $bytes" \
	-case "none=$sh_ --config $cfg run big out --strategy none -- $bytes" \
	-case "null=$sh_ --config $cfg run big out --strategy null -- $bytes" \
	-case "landlock=$sh_ --config $cfg run big out --strategy landlock -- $bytes" -ref direct 2>&1) || tput="(failed: $tput)"

echo "== download through the egress proxy" >&2
serve=$work/serve
mkdir -p "$serve"
rm -f "$serve"/*.port
"$bin/loopserve" -addr 127.0.0.2 -dir "$serve" &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT
while [ ! -s "$serve/https.port" ]; do sleep 0.1; done
hp=$(cat "$serve/http.port") sp=$(cat "$serve/https.port") ca=$serve/ca.pem
blob="blob?bytes=$bytes"
net_cases=$work/net-cases.txt
: >"$net_cases"
netcase() { label=$1; shift; if "$@" 2>"$work/case.err" | grep -q "^$bytes$"; then echo "$label=$*" >>"$net_cases"; else note "$label left out: $(head -c 300 "$work/case.err" | tr '\n' ' ')"; fi; }
export SSL_CERT_FILE="$ca" BENCH_KEY=bench-secret
netcase direct-http sh "$skills/net/scripts/get.sh" "http://127.0.0.2:$hp/$blob"
netcase direct-https sh "$skills/net/scripts/get.sh" --cacert "$ca" "https://127.0.0.2:$sp/$blob"
netcase landlock-http "$sh_" --config "$work/net.yaml" run net get --strategy landlock -- "http://127.0.0.2:$hp/$blob"
netcase landlock-https-tunnel "$sh_" --config "$work/net.yaml" run net get --strategy landlock -- --cacert "$ca" "https://127.0.0.2:$sp/$blob"
netcase landlock-https-terminated "$sh_" --config "$work/key.yaml" run net get --strategy landlock -- "https://127.0.0.2:$sp/$blob"
if [ -x "$srt" ]; then
	# srt exempts an IP literal on its list from its loopback check; its
	# no_proxy covers 127.0.0.0/8, so curl is told to use the proxy anyway.
	printf '{"network": {"allowedDomains": ["127.0.0.2:%s"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowRead": [], "allowWrite": [], "denyWrite": []}}\n' "$hp" >"$work/srt-net.json"
	printf '#!/bin/sh\nexec %s --settings %s -c "curl -sS --noproxy %s -o /dev/null -w %s http://127.0.0.2:%s/%s"\n' \
		"$srt" "$work/srt-net.json" "''" "'%{size_download}\\n'" "$hp" "$blob" >"$work/srt-get.sh"
	netcase srt-http sh "$work/srt-get.sh"
fi
nrefs="-ref direct-http"
grep -q '^direct-https=' "$net_cases" && nrefs="$nrefs -ref direct-https"
# shellcheck disable=SC2086
download=$("$bin/oneshot" -rounds 3 -warmup 1 -expect "$bytes" -cases "$net_cases" $nrefs 2>&1) || download="(failed: $download)"
kill $serve_pid 2>/dev/null || true

echo "== catalog" >&2
catalog=""
for n in $sizes; do
	dir=$work/catalog-$n
	[ -d "$dir" ] || "$bin/genskills" "$dir" "$n"
	r=$(( n >= 50000 ? 3 : 5 ))
	t=$("$bin/oneshot" -rounds $r -warmup 1 \
		-case "list-$n=$sh_ --skills $dir list" \
		-case "run-one-of-$n=$sh_ --skills $dir run skill-$((n / 2)) run --strategy none" \
		-case "match-$n=$sh_ --skills $dir match summarise-invoice-reports")
	catalog="$catalog
$t
"
done

echo "== fleet (Temporal, in-process server)" >&2
fleet=$(cd examples/fleet && go run . -bench -bin "$bin" 2>&1) || fleet="(failed: $fleet)"

echo "== Go benchmarks (warm calls, plugin start, concurrency)" >&2
gobench=$(go test -run '^$' -bench 'PluginStart|Call' -benchtime "${BENCHTIME:-100x}" ./host/internal/sandbox/ 2>&1 | grep -E '^(Benchmark|cpu:)' || true)

# --- report ------------------------------------------------------------------
ver() { "$@" 2>&1 | head -1; }
{
	echo "# Benchmarks"
	echo
	echo "Written by \`make bench\` (bench/run.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'). Numbers are from one run on"
	echo "the machine below; ratios come from interleaved rounds in that same run, so they hold better"
	echo "than the absolute numbers when the machine is shared."
	echo
	echo "## Machine and versions"
	echo
	echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //') × $(nproc) cores; load average at start: $load_start"
	echo "- kernel: $(uname -sr); $(go version)"
	echo "- skillhost: $(ver "$sh_" --version); bwrap: $(ver bwrap --version || echo none); srt: $( [ -x "$srt" ] && ver "$srt" --version || echo none)"
	echo
	echo "## One-shot \`skillhost run\` of an \`echo hi\` script"
	echo
	echo "CPU is user + system time of the whole process tree (host, plugin, supervisor, helper, script),"
	echo "as the kernel reports it when each process is reaped. bench/oneshot is the subreaper of what it"
	echo "runs, so a process that outlives its parent is counted too: bwrap's outer process exits without"
	echo "waiting for the namespace's init (and the script under it), which took two thirds of bwrap's CPU"
	echo 'out of the count until issue 37 (the machine'"'"'s busy time is the cross-check below).'
	echo "bwrap runs with \`--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all\`; srt with an"
	echo "empty allow-list (no network, reads allowed, no writes)."
	echo
	echo "$oneshot"
	echo
	if [ -n "$syscheck" ]; then
		echo "Cross-check, the machine's busy time (\`/proc/stat\`, every process and the kernel's own threads) over"
		echo "blocks of 20 runs, the two cases alternating (sorted by ratio; each run also pays the shell's fork and exec):"
		echo
		echo "$syscheck"
		echo
	fi
	echo "### Where a one-shot run goes (\`SKILLHOST_TRACE=timing\`)"
	echo
	echo "Medians per phase: wall time, and CPU of the host process; the plugin, its supervisor and the"
	echo "script are the line of child processes (see docs/performance.md)."
	echo
	echo "$phases"
	echo
	echo "### Warm MCP calls"
	echo
	echo "\`skillhost mcp\` on stdio, started once per case in an empty directory, calling the echo tool; CPU of"
	echo "the server, its plugin and every process either reaped, per call, against the script run by a bare"
	echo "fork and exec (bench/warm). Every server stays up; each round makes 40 calls of every case in"
	echo "rotating order, and the CPU figures are over every round (the kernel counts a live process's CPU"
	echo "in 10 ms ticks, so a batch must be long and a round's figure is coarse); wall times are over every call."
	echo
	echo "$warm"
	echo
	echo "### \`skillhost list\` (3 skills)"
	echo
	echo "$list"
	echo
	echo "## Staged writes"
	echo
	echo "The echo run under Landlock with a workspace write grant (\`ws-\`) and without (\`nows-\`), each staged"
	echo "(the default: an overlay of the grant, the change set read and applied after the run) and direct"
	echo "(\`sandbox.writes: direct\`). The issue's bound: staged within +10 % CPU of direct."
	echo
	echo "$staged"
	echo
	echo "Reading and applying a stage (\`go test -bench 'Apply1000|ScanUnchanged' ./host/changeset/\`): 1,000 changed"
	echo "files, and a stage the run left empty:"
	echo
	echo '```'
	echo "$applybench"
	echo '```'
	echo
	echo "## Output throughput (${mib} MiB through the CLI)"
	echo
	echo "Peak RSS is the largest single process of the tree (the host, for skillhost)."
	echo
	echo "$tput"
	echo
	echo "## Network by name: a ${mib} MiB download from a loopback server"
	echo
	echo "\`curl\` of ${mib} MiB from 127.0.0.2: directly; under the Landlock plugin with \`network: [127.0.0.2]\`, through"
	echo "the run's relay and egress proxy, over plain HTTP, HTTPS tunnelled (CONNECT), and HTTPS that the"
	echo "proxy terminates because it holds a credential for the host; and under srt with the same allow-list."
	echo "MiB/s is ${mib} divided by the wall time. \`skillhost-run-landlock-by-name\` in the one-shot table is the"
	echo "same echo run with the list: what starting the proxy and the relay adds."
	echo
	echo "$download"
	echo
	echo "## Catalog: generated skills (time and peak RSS)"
	echo
	echo "\`run-one-of-N\` runs one skill with the in-process runner: it reads only that skill."
	echo "$catalog"
	echo "## The fleet: runs on a Temporal cluster"
	echo
	echo "\`go run . -bench\` in examples/fleet: an in-process Temporal server, the host and the"
	echo "workers on this machine; \`echo\` under Landlock per call (docs/fleet.md)."
	echo
	echo "$fleet"
	echo
	echo "## Warm calls through the Go API, plugin start, concurrency"
	echo
	echo "From \`go test -bench 'PluginStart|Call' ./host/internal/sandbox/\`: \`/bin/true\` per call; cpu-ms/op counts the"
	echo "test process, the plugin and every child either reaped. automtls is skillhost's Ed25519 mutual TLS."
	echo
	echo '```'
	echo "$gobench"
	echo '```'
	echo
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)."
	if [ -n "$notes" ]; then
		echo
		echo "## Notes"
		echo "$notes"
	fi
} >"$out"
echo "wrote $out" >&2
