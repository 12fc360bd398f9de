#!/usr/bin/env bash
# `npm run campaign`: the reproducers of the reliability campaign (docs/design.md "Nothing
# destroyed, nothing hangs"), re-run against this build: a report or replay aimed at a device
# node or a foreign file, --force over foreign files, a shard with a run missing, a billion seeds,
# /dev/zero as an input, a runaway flow, YAML aliases, stdout on /dev/full, broken result.json
# files, bad keys and unreachable hosts. One Markdown row each: the item, the case, the exit
# status, seconds, peak RSS (KiB, GNU time) and whether the check held, with ptlab's last line on
# stderr. Exit 1 when any check failed. Needs GNU time and ssh-keygen; the device-node rows need root (mknod).
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
P="node $REPO/dist/harness/cli/ptlab.js"
W=$(mktemp -d "${TMPDIR:-/tmp}/ptlab-campaign-XXXXXX"); cd "$W"
trap 'rm -rf "$W"' EXIT
failed=0
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$5" "$6"; }
t() { # t ITEM DESC CHECK-CMD -- CMD...: runs CMD with a 60 s bound, then CHECK-CMD (0 = pass)
  local item=$1 desc=$2 check=$3; shift 4
  local s=$(date +%s.%N)
  /usr/bin/time -f %M -o "$W/rss" timeout -s KILL 60 "$@" > "$W/out" 2> "$W/err"; local rc=$?
  local e=$(echo "$(date +%s.%N) - $s" | bc)
  local ok=FAIL; (eval "$check") >/dev/null 2>&1 && ok=pass
  [ $ok = pass ] || failed=$((failed + 1))
  row "$item" "$desc" "$rc" "$(printf %.1f "$e")" "$(tail -1 "$W/rss")" "$ok: $(grep -v -e '^Command' -e '^ptlab run: [0-9]* scenario' -e 'shows its options' "$W/err" | tail -1 | cut -c1-150)"
}
$P run topa-grow single-entry-topa --cpu skylake,broadwell --out suite >/dev/null 2>&1
RUN=suite/topa-grow/skylake
echo '| item | case | exit | s | peak RSS KiB | result: first stderr line |'
echo '|---|---|---|---|---|---|'
# A key pair of its own, and a known_hosts with its key for each host the ssh rows name (they fail
# before the host key matters).
ssh-keygen -q -t ed25519 -N '' -f key; HK=$(cut -d' ' -f1,2 key.pub); printf 'nx.invalid %s\n[127.0.0.1]:1 %s\n127.0.0.1 %s\n' "$HK" "$HK" "$HK" > kh
if mknod full c 1 7 2>/dev/null && mknod null c 1 3 2>/dev/null; then
  t 1 'report --out a device node (char 1,7, as /dev/full)' '[ -c full ] && [ $rc -ne 0 ]' -- $P report suite --out "$W/full"
  t 1 'report --out a device node (char 1,3, as /dev/null)' '[ -c null ] && [ $rc -ne 0 ]' -- $P report suite --out "$W/null"
else
  row 1 'report --out a device node' - - - 'not run: mknod needs root'
fi
echo keep > foreign.html
t 1 'report --out a file ptlab did not write' '[ "$(cat foreign.html)" = keep ] && [ $rc -ne 0 ]' -- $P report suite --out foreign.html
sha=$(sha256sum $RUN/transcript.jsonl | cut -d' ' -f1); ino=$(stat -c %i $RUN/transcript.jsonl)
t 2 'replay RUN --out RUN' '[ "$(sha256sum '$RUN'/transcript.jsonl | cut -d" " -f1)" = '$sha' ] && [ $rc -ne 0 ]' -- $P replay $RUN --out $RUN
mkdir fdir; echo keep > fdir/transcript.jsonl
t 2 'replay RUN --out DIR with a foreign transcript.jsonl' '[ "$(cat fdir/transcript.jsonl)" = keep ] && [ $rc -ne 0 ]' -- $P replay $RUN --out fdir
t 2 'replay RUN --out /dev/ptlabx' '[ ! -e /dev/ptlabx ] && [ $rc -ne 0 ]' -- $P replay $RUN --out /dev/ptlabx
mkdir forced; echo keep > forced/junit.xml
t 3 'run --force into a dir with a foreign junit.xml' '[ "$(cat forced/junit.xml)" = keep ] && [ $rc -ne 0 ]' -- $P run topa-grow --out forced --force
$P run topa-grow topa-chain --cpu skylake --shard 1/2 --out s1 >/dev/null 2>&1; $P run topa-grow topa-chain --cpu skylake --shard 2/2 --out s2 >/dev/null 2>&1
rm -rf "$(ls -d s1/*/skylake | head -1)"
t 4 'merge a shard whose run directory is missing' '[ $rc -eq 2 ] && [ ! -e merged/junit.xml ]' -- $P merge s1 s2 --out merged
t 5 'run --seeds 1-1000000000' '[ $rc -eq 2 ] && [ ! -e X ]' -- $P run topa-grow --cpu skylake --seeds 1-1000000000 --out X
t 6 'flow --image /dev/zero@BASE' '[ $rc -eq 2 ]' -- $P flow $RUN/trace.pt --image /dev/zero@0x10000000
t 6 'run --target ssh --key /dev/zero' '[ $rc -eq 2 ]' -- $P run topa-grow --target ssh --host 127.0.0.1 --key /dev/zero --known-host kh --out K
t 7 'replay RUN --out /proc/x' '[ $rc -eq 2 ]' -- $P replay $RUN --out /proc/x
head -c 504 /dev/urandom > case.bin; for i in $(seq 2000); do cat case.bin; done > rep.pt
printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x23' > psb.bin
t 8 'flow of 1 MB of a repeated 504-byte random case' '[ $rc -le 1 ]' -- $P flow rep.pt --image $RUN/image.bin@0x10000000 --json
printf 'a: &a [*a]\n' > alias.yaml
t 9 'seq of a self-referencing YAML alias' '[ $rc -eq 2 ]' -- $P seq alias.yaml --out q
python3 -c "
lines=['a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]']
for i in range(1,9): lines.append(chr(97+i)+': &'+chr(97+i)+' ['+','.join(['*'+chr(96+i)]*9)+']')
open('laughs.yaml','w').write('\n'.join(lines)+'\n')"
t 9 'seq of a billion-laughs file' '[ $rc -eq 2 ]' -- $P seq laughs.yaml --out q2
cp laughs.yaml hosts.yaml
t 9 'run --hosts of a billion-laughs file' '[ $rc -eq 2 ]' -- $P run topa-grow --hosts hosts.yaml --out h
t 16 'dump --json with stdout on /dev/full' '[ $rc -eq 4 ]' -- bash -c "$P dump --json $RUN > /dev/full"
t 16 'list with stdout on /dev/full' '[ $rc -eq 4 ]' -- bash -c "$P list > /dev/full"
t 16 '--version with stdout on /dev/full' '[ $rc -eq 4 ]' -- bash -c "$P --version > /dev/full"
cp -r $RUN trunc; head -c 20 $RUN/result.json > trunc/result.json
t 16 'diff of a run with a truncated result.json' '[ $rc -eq 2 ]' -- $P diff trunc $RUN
cp -r $RUN badexp; node -e 'const f="badexp/result.json";const j=JSON.parse(require("fs").readFileSync(f));j.expectations="x";require("fs").writeFileSync(f,JSON.stringify(j))'
t 16 'replay of a result.json with "expectations":"x"' '[ $rc -eq 2 ]' -- $P replay badexp --out rb
touch existing
t 16 'replay --out EXISTING_FILE' '[ $rc -eq 2 ]' -- $P replay $RUN --out existing
head -c 400 /dev/urandom > badkey; chmod 600 badkey
t 17 'an unparsable key' '[ $rc -eq 2 ]' -- $P run topa-grow --target ssh --host 127.0.0.1 --key badkey --known-host kh --out K2
t 17 'diff with stdout on /dev/full' '[ $rc -eq 4 ]' -- bash -c "$P diff $RUN suite/topa-grow/broadwell > /dev/full"
t 17 'diff --suite SUITE RUNDIR' '[ $rc -eq 2 ]' -- $P diff --suite suite $RUN
t 17 'ssh to NXDOMAIN' '[ $rc -eq 3 ]' -- $P run topa-grow --target ssh --host nx.invalid --key key --known-host kh --out K3
t 17 "ssh --host ''" '[ $rc -eq 2 ]' -- $P run topa-grow --target ssh --host '' --key key --known-host kh --out K4
t 17 'ssh to a closed port' '[ $rc -eq 3 ]' -- $P run topa-grow --target ssh --host 127.0.0.1 --port 1 --key key --known-host kh --out K5
echo
echo "$failed check(s) failed"
[ "$failed" -eq 0 ]
