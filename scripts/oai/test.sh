#!/bin/sh
# `make oai-test`: OAI's gNB and UE over rfsimulator with tcran inside
# (docs/oai.md), a CUBIC download (iperf3 -R -C cubic) with ping beside it:
#   run 1  OAI as it is (no pipeline): the bufferbloat of its RLC buffer,
#          judged once that buffer has levelled off;
#   run 2  tcran on the data path, first passing everything (passthrough),
#          then the cure deployed live mid-download: priority for ping and
#          UDP + jit (pipelines/priority-jit.toml), or OAI_TEST_CURE=NAME
#          for pipelines/NAME.toml (fq-codel-jit, fq-codel-bdp). Deployed
#          over E2: the gNB's E2 node (TCRAN_OAI_E2) reaches `tcran xapp
#          low-latency --pipeline CURE`, started after the passthrough
#          phase, which deploys the cure on the bloated bearer (RLC sojourn
#          above 10 ms, TC-RAN Fig. 7); OAI_TEST_DEPLOY=file deploys it by
#          replacing the pipeline file instead.
# Judged in radio time (OAI's frame/slot clock, written by the glue next
# to the wall clock): the cure's ping RTT at least 10x below run 1's at a
# MAC throughput within 10 % of it.
#
# Everything it makes is its own: two network namespaces named with its
# pid (gNB and UE, joined by a veth pair), its processes (killed by
# process group on exit), its files under $OAI_CACHE/oai-test/<pid>.
#   OAI_CACHE          where `make oai` built (default /work/oai-cache)
#   OAI_TEST_SECONDS   length of each phase (default 30; judged on its second half)
#   OAI_TEST_VANILLA_MAX  longest wait for OAI's RLC buffer to level off in
#                      run 1 (default 4 x OAI_TEST_SECONDS, wall-clock seconds)
#   OAI_TEST_CURE      the pipeline deployed in run 2 (default priority-jit)
#   OAI_TEST_DEPLOY    e2 (default) or file: how run 2's cure is deployed
#   TCRAN              the tcran command (default: the release build's)
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/scripts/oai"
cache=${OAI_CACHE:-/work/oai-cache}
seconds=${OAI_TEST_SECONDS:-30}
vanilla_max=${OAI_TEST_VANILLA_MAX:-$((4 * seconds))}
oai="$cache/src/openairinterface5g-v2.1.0"
gnb_bin="$cache/build/nr-softmodem"
ue_bin="$cache/build/nr-uesoftmodem"
conf="$oai/ci-scripts/conf_files/gnb.band78.106prb.rfsim.phytest-dora.conf"
# OAI's uplink MCS is capped at 9 unless the configuration says otherwise
# (`ul_max_mcs`, a default for real radios that cannot keep up with a heavy
# uplink, OAI's NR_SA_Tutorial_COTS_UE.md); its own CI lifts it to 28 the
# same way. Over rfsimulator's noiseless channel the uplink's BLER-driven
# link adaptation then chooses, as the downlink's does (docs/oai.md).
# ulsch_max_frame_inactivity 0, as OAI's own 106-PRB rfsimulator config
# sets it: a UE the MAC believes idle gets a small grant every TDD period,
# not every 10 frames; a UE whose buffer never empties (the download's
# ACKs) triggers no regular BSR or SR when the ping's request arrives
# (TS 38.321 5.4.5), and without a grant would wait for retxBSR-Timer.
gnb_options="--MACRLCs.[0].ul_max_mcs 28 --MACRLCs.[0].ulsch_max_frame_inactivity 0"
deploy_by=${OAI_TEST_DEPLOY:-e2}
tcran=${TCRAN:-${CARGO_TARGET_DIR:-$repo/target}/release/tcran}
case "$deploy_by" in
    e2 | file) ;;
    *) echo "oai-test: OAI_TEST_DEPLOY=$deploy_by: must be e2 or file" >&2; exit 2 ;;
esac
if [ "$deploy_by" = e2 ] && [ ! -x "$tcran" ]; then
    echo "oai-test: $tcran is missing: cargo build --release -p tcran-cli, or TCRAN=path" >&2
    exit 2
fi
# The RIC's port inside the gNB's namespace (its own loopback: nothing
# else listens there).
ric=127.0.0.1:36421

for f in "$gnb_bin" "$ue_bin" "$conf"; do
    if [ ! -e "$f" ]; then
        echo "oai-test: $f is missing: run \`make oai\` first" >&2
        exit 2
    fi
done
for tool in ip iperf3 ping python3; do
    command -v "$tool" >/dev/null || { echo "oai-test: $tool is missing (apt-get install iproute2 iperf3 iputils-ping python3)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "oai-test: needs root (network namespaces)" >&2; exit 2; }

id=$$
ns_gnb="tcran-oai-$id-gnb"
ns_ue="tcran-oai-$id-ue"
out="$cache/oai-test/$id"
mkdir -p "$out"
pgids=""

cleanup() {
    for g in $pgids; do kill -TERM "-$g" 2>/dev/null || true; done
    sleep 1
    for g in $pgids; do kill -KILL "-$g" 2>/dev/null || true; done
    for g in $pgids; do wait "$g" 2>/dev/null || true; done
    pgids=""
    ip netns del "$ns_gnb" 2>/dev/null || true
    ip netns del "$ns_ue" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts a command in its own process group (setsid), in a namespace,
# niced; remembers the group to kill it, and only it.
start() {
    log=$1
    ns=$2
    shift 2
    (cd "$out" && exec setsid ip netns exec "$ns" nice -n 15 "$@" >"$log" 2>&1) &
    pgids="$pgids $!"
}

# Ends a session: its gNB must be gone before the next one starts, or the
# next UE would attach to it.
stop_all() {
    for g in $pgids; do kill -TERM "-$g" 2>/dev/null || true; done
    sleep 2
    for g in $pgids; do kill -KILL "-$g" 2>/dev/null || true; done
    # Each group's leader is this shell's child: reap it, then nothing of
    # the group may be left.
    for g in $pgids; do wait "$g" 2>/dev/null || true; done
    for g in $pgids; do
        waited=0
        while group_alive "$g"; do
            sleep 1
            waited=$((waited + 1))
            if [ "$waited" -ge 30 ]; then
                echo "oai-test: process group $g survived SIGKILL for 30 s" >&2
                exit 1
            fi
        done
    done
    pgids=""
}

# Whether a process of group $1 still runs (a zombie waiting for init to
# reap it does not count: a gNB of 1 GB under load takes seconds to exit).
group_alive() {
    ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

ip netns add "$ns_gnb"
ip netns add "$ns_ue"
ip link add "tog$id" netns "$ns_gnb" type veth peer name "tou$id" netns "$ns_ue"
ip -n "$ns_gnb" addr add 10.77.0.1/24 dev "tog$id"
ip -n "$ns_ue" addr add 10.77.0.2/24 dev "tou$id"
for ns in "$ns_gnb" "$ns_ue"; do
    ip -n "$ns" link set lo up
done
ip -n "$ns_gnb" link set "tog$id" up
ip -n "$ns_ue" link set "tou$id" up

wait_for() { # seconds, description, command...
    limit=$1
    what=$2
    shift 2
    waited=0
    until "$@" >/dev/null 2>&1; do
        sleep 1
        waited=$((waited + 1))
        if [ "$waited" -ge "$limit" ]; then
            echo "oai-test: $what did not happen within $limit s (logs in $out)" >&2
            exit 1
        fi
    done
}

# One gNB + UE session: $1 name, $2 pipeline file or "" (OAI as it is),
# $3 pipeline to deploy live after one phase, or "".
session() {
    name=$1
    pipeline=$2
    cure=$3
    live="$out/$name-pipeline.toml"
    if [ -n "$pipeline" ]; then cp "$pipeline" "$live"; fi
    e2=""
    if [ -n "$cure" ] && [ "$deploy_by" = e2 ]; then
        # The xApp starts only after the passthrough phase: the gNB keeps
        # asking (at most 1 s apart) until it is there.
        e2="ric = \"$ric\"
retry_max = \"1s\""
    fi
    start "$out/$name-gnb.log" "$ns_gnb" env OAI_NO_REALTIME=1 TCRAN_OAI_STATS="$out/$name-stats.jsonl" \
        ${pipeline:+TCRAN_OAI_PIPELINE="$live"} ${e2:+TCRAN_OAI_E2="$e2"} \
        "$gnb_bin" -O "$conf" --rfsim --do-ra --noS1 $gnb_options
    wait_for 120 "gNB start ($name)" ip netns exec "$ns_gnb" ip addr show oaitun_enb1
    sleep 2
    start "$out/$name-ue.log" "$ns_ue" env OAI_NO_REALTIME=1 \
        "$ue_bin" --rfsim --do-ra --noS1 -r 106 --numerology 1 --band 78 -C 3619200000 \
        --rfsimulator.serveraddr 10.77.0.1
    wait_for 240 "UE attach ($name)" sh -c "ip netns exec $ns_ue ip addr show oaitun_ue1 | grep -q 10.0.1.2"
    # Kernel stamps of every echo at both TUN devices: the ping's RTT split
    # into its uplink and downlink legs (judge.py).
    start "$out/$name-icmp-ue.txt" "$ns_ue" python3 "$here/icmp_stamps.py" oaitun_ue1
    start "$out/$name-icmp-gnb.txt" "$ns_gnb" python3 "$here/icmp_stamps.py" oaitun_enb1
    wait_for 60 "first ping ($name)" ip netns exec "$ns_ue" ping -c 1 -W 2 10.0.1.1
    if [ -n "$cure" ]; then
        total=$((seconds * 2 + 2))
    else
        # Run 1 lasts until OAI's RLC buffer has levelled off (at most
        # $vanilla_max s), then half a phase more: the part judged.
        total=$((vanilla_max + seconds / 2 + 2))
    fi
    cat /proc/loadavg >"$out/$name-load-start"
    start "$out/$name-iperf-server.log" "$ns_gnb" iperf3 -s -1 -B 10.0.1.1 -p 5201
    sleep 1
    date +%s%N >"$out/$name-start"
    start "$out/$name-ping.log" "$ns_ue" ping -D -i 0.2 -w "$total" 10.0.1.1
    start "$out/$name-iperf.json" "$ns_ue" iperf3 -c 10.0.1.1 -p 5201 -R -C cubic -t "$total" -J
    if [ -n "$cure" ]; then
        sleep "$seconds"
        if [ "$deploy_by" = e2 ]; then
            # The deploy's instant is when the xApp reports it applied
            # (its first reconfiguration line).
            date +%s%N >"$out/$name-xapp-start"
            start "$out/$name-xapp.log" "$ns_gnb" sh -c '"$1" xapp low-latency --ric-listen "$2" --pipeline "$3" --threshold 10ms --json 2>"$4" |
                while IFS= read -r line; do
                    echo "$line"
                    [ -s "$5" ] || date +%s%N >"$5"
                done' sh "$tcran" "$ric" "$cure" "$out/$name-xapp.err" "$out/$name-deploy"
        else
            date +%s%N >"$out/$name-deploy"
            cp "$cure" "$live.new"
            mv "$live.new" "$live"
        fi
        sleep $((seconds + 5))
    else
        # judge.py's criterion, asked every 2 s: the wall-clock instant the
        # RLC buffer stopped growing, or nothing yet.
        deadline=$(($(date +%s) + vanilla_max))
        while [ "$(date +%s)" -lt "$deadline" ] &&
            [ -z "$(python3 "$here/judge.py" --levelled "$out/$name-stats.jsonl" "$(cat "$out/$name-start")")" ]; do
            sleep 2
        done
        sleep $((seconds / 2 + 2))
    fi
    cat /proc/loadavg >"$out/$name-load-end"
    # What the TUN devices dropped: a packet the kernel could not queue for
    # OAI's TUN reader is lost before RLC, and counted here.
    ip -j -s -n "$ns_gnb" link show dev oaitun_enb1 >"$out/$name-tun-gnb.json" 2>/dev/null || true
    ip -j -s -n "$ns_ue" link show dev oaitun_ue1 >"$out/$name-tun-ue.json" 2>/dev/null || true
    stop_all
}

# judge.py's criteria, on made-up stats, before anything is started.
(cd "$here" && PYTHONDONTWRITEBYTECODE=1 python3 -m unittest -q test_judge 2>"$out/test_judge.log") || {
    cat "$out/test_judge.log" >&2
    exit 1
}

# A bad pipeline file stops the gNB before it starts, with exit code 2 and
# tcran's message naming the variable, the file and the field.
printf 'pacer = { kind = "jit", window = 0 }\n[[queues]]\nid = 0\nkind = "fifo"\n' >"$out/bad.toml"
status=0
TCRAN_OAI_PIPELINE="$out/bad.toml" "$gnb_bin" >/dev/null 2>"$out/bad.err" || status=$?
if [ "$status" != 2 ] || ! grep -q "TCRAN_OAI_PIPELINE=$out/bad.toml: config: pacer.window = 0: must be in 1..=1000" "$out/bad.err"; then
    echo "oai-test: a bad pipeline file gave exit code $status and: $(cat "$out/bad.err")" >&2
    exit 1
fi
echo "oai-test: a bad pipeline file is refused (exit code 2): $(cat "$out/bad.err")"

t0=$(date +%s)
session vanilla "" ""
session tcran "$here/pipelines/passthrough.toml" "$here/pipelines/${OAI_TEST_CURE:-priority-jit}.toml"
echo "oai-test: sessions took $(($(date +%s) - t0)) s; files in $out"
python3 "$here/judge.py" "$out" "$seconds" "$deploy_by" "$vanilla_max"
